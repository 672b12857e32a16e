//! The channel against real processes (`sh`), hostile ones included.

use std::time::Duration;

use super::*;

fn sh(script: &str) -> ProcessSpec {
    let path = std::env::var("PATH").unwrap_or_default();
    ProcessSpec {
        command: "sh".into(),
        args: vec!["-c".into(), script.into()],
        env: BTreeMap::from([("PATH".into(), path)]),
        cwd: None,
    }
}

fn small() -> Limits {
    Limits {
        max_line_bytes: 1024,
        max_bytes_per_turn: 10_000,
        max_stderr_bytes: 256,
    }
}

async fn recv(ch: &mut ProcessChannel) -> Result<String, ChannelError> {
    tokio::time::timeout(Duration::from_secs(20), ch.recv())
        .await
        .expect("an answer within 20 s")
}

/// Whether `pid` is gone (or a zombie no one reaped yet).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[tokio::test]
async fn lines_go_both_ways_and_a_turn_starts_its_count_again() {
    let spec = sh("while read l; do echo \"got $l\"; done");
    let mut ch = ProcessChannel::spawn(&spec, small()).unwrap();
    for i in 0..3 {
        ch.new_turn();
        ch.send(&format!("{{\"id\":{i}}}")).await.unwrap();
        assert_eq!(recv(&mut ch).await.unwrap(), format!("got {{\"id\":{i}}}"));
    }
    assert!(matches!(
        ch.send("two\nlines").await,
        Err(ChannelError::LineBreak { .. })
    ));
    ch.kill().await;
}

#[tokio::test]
async fn only_the_configured_environment_is_passed() {
    let mut spec = sh("env; echo END");
    spec.env.insert("GIVEN".into(), "1".into());
    let mut ch = ProcessChannel::spawn(&spec, small()).unwrap();
    let mut vars = Vec::new();
    loop {
        let line = recv(&mut ch).await.unwrap();
        if line == "END" {
            break;
        }
        vars.push(line);
    }
    assert!(vars.contains(&"GIVEN=1".to_string()), "{vars:?}");
    // The host's own variables (HOME, the test harness's) stay out.
    for var in &vars {
        let name = var.split('=').next().unwrap_or_default();
        assert!(
            ["GIVEN", "PATH", "PWD", "SHLVL", "OLDPWD", "_"].contains(&name),
            "{var} leaked into the process"
        );
    }
}

#[tokio::test]
async fn a_line_past_the_bound_ends_the_read() {
    let spec = sh("head -c 5000 /dev/zero | tr '\\0' a; echo");
    let mut ch = ProcessChannel::spawn(&spec, small()).unwrap();
    let e = recv(&mut ch).await.unwrap_err();
    assert!(
        matches!(e, ChannelError::LineTooLong { limit: 1024, .. }),
        "{e}"
    );
}

#[tokio::test]
async fn a_flood_ends_the_turn() {
    let mut ch = ProcessChannel::spawn(&sh("yes"), small()).unwrap();
    let e = loop {
        match recv(&mut ch).await {
            Ok(line) => assert_eq!(line, "y"),
            Err(e) => break e,
        }
    };
    assert!(
        matches!(e, ChannelError::Flood { limit: 10_000, .. }),
        "{e}"
    );
}

#[tokio::test]
async fn an_exit_is_reported_with_its_status_after_the_last_line() {
    let mut ch = ProcessChannel::spawn(&sh("echo one; printf two; exit 3"), small()).unwrap();
    assert_eq!(recv(&mut ch).await.unwrap(), "one");
    assert_eq!(recv(&mut ch).await.unwrap(), "two");
    let e = recv(&mut ch).await.unwrap_err();
    assert!(
        matches!(&e, ChannelError::Exited { status, .. } if status.contains('3')),
        "{e}"
    );
}

#[tokio::test]
async fn writing_to_a_process_that_exited_says_it_exited() {
    let mut ch = ProcessChannel::spawn(&sh("exec 0<&-; exit 4"), small()).unwrap();
    // Its end of the pipe is gone once it exits: writes break.
    let e = loop {
        match ch.send("hello").await {
            Ok(()) => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
            Err(e) => break e,
        }
    };
    assert!(
        matches!(&e, ChannelError::Exited { status, .. } if status.contains('4')),
        "{e}"
    );
}

#[tokio::test]
async fn a_line_that_is_not_utf8_is_refused() {
    let mut ch = ProcessChannel::spawn(&sh("printf '\\377\\376\\n'"), small()).unwrap();
    assert!(matches!(
        recv(&mut ch).await,
        Err(ChannelError::NotUtf8 { .. })
    ));
}

#[tokio::test]
async fn a_flood_on_stderr_neither_blocks_the_process_nor_fills_the_log() {
    let spec = sh("head -c 2000000 /dev/zero | tr '\\0' e >&2; echo done");
    let mut ch = ProcessChannel::spawn(&spec, small()).unwrap();
    assert_eq!(recv(&mut ch).await.unwrap(), "done");
}

#[tokio::test]
async fn dropping_the_channel_kills_what_the_process_started() {
    let mut ch = ProcessChannel::spawn(&sh("sleep 300 & echo $!; wait"), small()).unwrap();
    let leader = ch.pid().unwrap();
    let sleeper: u32 = recv(&mut ch).await.unwrap().parse().unwrap();
    assert!(!gone(sleeper));
    drop(ch);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !(gone(sleeper) && gone(leader)) {
        assert!(std::time::Instant::now() < deadline, "still running");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_command_that_does_not_exist_is_named() {
    let spec = ProcessSpec {
        command: "/no/such/agent".into(),
        ..ProcessSpec::default()
    };
    let e = ProcessChannel::spawn(&spec, small()).err().unwrap();
    assert!(e.to_string().contains("/no/such/agent"), "{e}");
}

#[tokio::test]
async fn when_the_process_exits_what_it_left_running_is_killed() {
    let spec = sh("sleep 300 >/dev/null 2>&1 & echo $!; exit 0");
    let mut ch = ProcessChannel::spawn(&spec, small()).unwrap();
    let sleeper: u32 = recv(&mut ch).await.unwrap().parse().unwrap();
    let e = recv(&mut ch).await.unwrap_err();
    assert!(matches!(e, ChannelError::Exited { .. }), "{e}");
    // The leader is reaped: its number is not killed again at drop.
    assert_eq!(ch.pid(), None);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !gone(sleeper) {
        assert!(std::time::Instant::now() < deadline, "left running");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
