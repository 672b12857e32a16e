//! Table-driven tests of every selection rule.

use clawhost_agent_core::{Route, Support};
use clawhost_config::{ApiKind, HarnessPolicy, RuntimePolicy};

use crate::*;

fn route(api: &str, base: &str, overrides: bool) -> Route {
    Route {
        provider: "p".into(),
        model: "m".into(),
        api: match api {
            "openai-completions" => ApiKind::OpenaiCompletions,
            "openai-responses" => ApiKind::OpenaiResponses,
            "anthropic-messages" => ApiKind::AnthropicMessages,
            _ => ApiKind::Scripted,
        },
        base_url: base.into(),
        authored_overrides: overrides,
    }
}

fn local() -> Route {
    route("openai-completions", "http://127.0.0.1:11434/v1", false)
}

fn yes(p: i32) -> Support {
    Support::Supported {
        priority: p,
        reason: "claims it".into(),
    }
}

fn no() -> Support {
    Support::Unsupported("not mine".into())
}

fn rp(id: Option<&str>, fb: Option<&str>) -> Option<RuntimePolicy> {
    Some(RuntimePolicy {
        id: id.map(Into::into),
        fallback: fb.map(Into::into),
    })
}

fn hp(id: Option<&str>, fb: Option<&str>) -> Option<HarnessPolicy> {
    Some(HarnessPolicy {
        runtime: id.map(Into::into),
        fallback: fb.map(Into::into),
    })
}

struct Case {
    name: &'static str,
    pinned: Option<&'static str>,
    env: Option<&'static str>,
    policy: PolicyScopes,
    route: Route,
    harnesses: Vec<(&'static str, Support)>,
    expect: Result<(&'static str, Reason), &'static str>,
}

fn case(name: &'static str) -> Case {
    Case {
        name,
        pinned: None,
        env: None,
        policy: PolicyScopes::default(),
        route: local(),
        harnesses: vec![],
        expect: Ok((BUILTIN, Reason::AutoFallback)),
    }
}

fn run(c: &Case) {
    let supports: Vec<(String, Support)> = c
        .harnesses
        .iter()
        .map(|(id, s)| (id.to_string(), s.clone()))
        .collect();
    let registered: Vec<String> = supports.iter().map(|(id, _)| id.clone()).collect();
    // As in the runner: a pinned session's runtime is not asked for claims.
    let supports = if c.pinned.is_some() {
        Vec::new()
    } else {
        supports
    };
    let got = select(&SelectionRequest {
        session_runtime: c.pinned,
        env_force: c.env,
        policy: &c.policy,
        route: &c.route,
        registered: &registered,
        supports: &supports,
    });
    match (&got, &c.expect) {
        (Ok(s), Ok((id, reason))) => assert_eq!(
            (s.runtime.as_str(), s.reason),
            (*id, *reason),
            "case `{}`: {s:?}",
            c.name
        ),
        (Err(e), Err(needle)) => assert!(
            e.to_string().contains(needle),
            "case `{}`: error `{e}` lacks `{needle}`",
            c.name
        ),
        _ => panic!("case `{}`: got {got:?}, expected {:?}", c.name, c.expect),
    }
}

#[test]
fn aliases_normalize() {
    for (input, want) in [
        (None, RuntimeId::Auto),
        (Some(""), RuntimeId::Auto),
        (Some("default"), RuntimeId::Auto),
        (Some("AUTO"), RuntimeId::Auto),
        (Some("pi"), RuntimeId::OpenClaw),
        (Some("openclaw"), RuntimeId::OpenClaw),
        (Some("codex-app-server"), RuntimeId::Plugin("codex".into())),
        (Some("plan-act"), RuntimeId::Plugin("plan-act".into())),
    ] {
        assert_eq!(normalize(input), want, "{input:?}");
    }
}

#[test]
fn selection_rules() {
    let cases = vec![
        // auto
        Case {
            harnesses: vec![],
            ..case("unset policy, no harness → built-in")
        },
        Case {
            harnesses: vec![("plan-act", no())],
            ..case("auto, harness declines → built-in")
        },
        Case {
            harnesses: vec![("b", yes(5)), ("a", yes(5)), ("c", yes(1))],
            expect: Ok(("a", Reason::AutoPlugin)),
            ..case("auto: highest priority, then id")
        },
        Case {
            harnesses: vec![("a", yes(1)), ("z", yes(9))],
            expect: Ok(("z", Reason::AutoPlugin)),
            ..case("auto: priority beats id")
        },
        Case {
            policy: PolicyScopes {
                model: rp(Some("default"), None),
                ..Default::default()
            },
            harnesses: vec![("x", yes(1))],
            expect: Ok(("x", Reason::AutoPlugin)),
            ..case("`default` means auto")
        },
        Case {
            policy: PolicyScopes {
                provider: rp(Some("auto"), Some("none")),
                ..Default::default()
            },
            expect: Err("fallback is \"none\""),
            ..case("auto with fallback none and no harness → error")
        },
        Case {
            policy: PolicyScopes {
                defaults: hp(None, Some("none")),
                ..Default::default()
            },
            harnesses: vec![("x", no())],
            expect: Err("no plugin harness supports"),
            ..case("fallback-only scope decides for auto")
        },
        // a provider or model name alone never selects
        Case {
            route: Route {
                provider: "codex".into(),
                model: "plan-act".into(),
                ..local()
            },
            harnesses: vec![("codex", no()), ("plan-act", no())],
            ..case("provider/model names never select a harness")
        },
        // explicit
        Case {
            policy: PolicyScopes {
                model: rp(Some("pi"), None),
                ..Default::default()
            },
            harnesses: vec![("x", yes(9))],
            expect: Ok((BUILTIN, Reason::Explicit)),
            ..case("explicit pi → built-in even with claims")
        },
        Case {
            policy: PolicyScopes {
                provider: rp(Some("x"), None),
                ..Default::default()
            },
            harnesses: vec![("x", yes(1))],
            expect: Ok(("x", Reason::Explicit)),
            ..case("explicit plugin at provider scope")
        },
        Case {
            policy: PolicyScopes {
                model: rp(Some("x"), None),
                provider: rp(Some("pi"), None),
                ..Default::default()
            },
            harnesses: vec![("x", yes(1))],
            expect: Ok(("x", Reason::Explicit)),
            ..case("model scope wins over provider scope")
        },
        Case {
            policy: PolicyScopes {
                model: rp(Some("openclaw"), None),
                provider: rp(Some("x"), None),
                ..Default::default()
            },
            harnesses: vec![("x", yes(1))],
            expect: Ok((BUILTIN, Reason::Explicit)),
            ..case("model scope openclaw wins over provider plugin")
        },
        Case {
            policy: PolicyScopes {
                agent: hp(Some("x"), None),
                defaults: hp(Some("pi"), None),
                ..Default::default()
            },
            harnesses: vec![("x", yes(1))],
            expect: Ok(("x", Reason::Explicit)),
            ..case("agents.list[] wins over agents.defaults")
        },
        Case {
            policy: PolicyScopes {
                defaults: hp(Some("x"), None),
                ..Default::default()
            },
            harnesses: vec![("x", yes(1))],
            expect: Ok(("x", Reason::Explicit)),
            ..case("agents.defaults.embeddedHarness.runtime")
        },
        Case {
            policy: PolicyScopes {
                provider: rp(Some("x"), None),
                agent: hp(Some("pi"), None),
                ..Default::default()
            },
            harnesses: vec![("x", yes(1))],
            expect: Ok(("x", Reason::Explicit)),
            ..case("provider scope wins over agent scope")
        },
        Case {
            policy: PolicyScopes {
                model: rp(Some("codex-app-server"), None),
                ..Default::default()
            },
            route: route("openai-responses", "https://api.openai.com/v1", false),
            harnesses: vec![("codex", yes(1))],
            expect: Ok(("codex", Reason::Explicit)),
            ..case("codex-app-server alias names codex")
        },
        // explicit fails closed unless the same scope has a fallback
        Case {
            policy: PolicyScopes {
                model: rp(Some("ghost"), None),
                ..Default::default()
            },
            expect: Err("runtime `ghost` (model agentRuntime) is not registered"),
            ..case("explicit missing → error")
        },
        Case {
            policy: PolicyScopes {
                model: rp(Some("x"), None),
                ..Default::default()
            },
            harnesses: vec![("x", no())],
            expect: Err("does not support route"),
            ..case("explicit unsupported → error")
        },
        Case {
            policy: PolicyScopes {
                model: rp(Some("ghost"), Some("pi")),
                ..Default::default()
            },
            expect: Ok((BUILTIN, Reason::ExplicitFallback)),
            ..case("explicit missing with fallback pi")
        },
        Case {
            policy: PolicyScopes {
                model: rp(Some("x"), Some("openclaw")),
                ..Default::default()
            },
            harnesses: vec![("x", no())],
            expect: Ok((BUILTIN, Reason::ExplicitFallback)),
            ..case("explicit unsupported with fallback openclaw")
        },
        Case {
            policy: PolicyScopes {
                model: rp(Some("ghost"), None),
                provider: rp(None, Some("pi")),
                ..Default::default()
            },
            expect: Err("not registered"),
            ..case("override never inherits a broader fallback")
        },
        Case {
            policy: PolicyScopes {
                agent: hp(Some("ghost"), None),
                defaults: hp(None, Some("pi")),
                ..Default::default()
            },
            expect: Err("not registered"),
            ..case("agent override ignores defaults' fallback")
        },
        Case {
            policy: PolicyScopes {
                model: rp(Some("ghost"), Some("maybe")),
                ..Default::default()
            },
            expect: Err("unknown fallback"),
            ..case("bad fallback value")
        },
        // env force
        Case {
            env: Some("x"),
            harnesses: vec![("x", yes(1))],
            expect: Ok(("x", Reason::Forced)),
            ..case("env forces a plugin")
        },
        Case {
            env: Some("pi"),
            policy: PolicyScopes {
                model: rp(Some("x"), None),
                ..Default::default()
            },
            harnesses: vec![("x", yes(1))],
            expect: Ok((BUILTIN, Reason::Forced)),
            ..case("env force beats config")
        },
        Case {
            env: Some("ghost"),
            policy: PolicyScopes {
                model: rp(None, Some("pi")),
                ..Default::default()
            },
            expect: Err("OPENCLAW_AGENT_RUNTIME"),
            ..case("env force of a missing harness fails closed")
        },
        Case {
            env: Some("auto"),
            harnesses: vec![("x", yes(1))],
            expect: Ok(("x", Reason::Forced)),
            ..case("env auto")
        },
        Case {
            env: Some("auto"),
            policy: PolicyScopes {
                agent: hp(Some("pi"), Some("none")),
                ..Default::default()
            },
            harnesses: vec![("x", no())],
            expect: Err("fallback is \"none\""),
            ..case("env overrides the id only: a configured fallback none stands")
        },
        Case {
            env: Some("auto"),
            policy: PolicyScopes {
                defaults: hp(None, Some("pi")),
                ..Default::default()
            },
            harnesses: vec![("x", no())],
            expect: Ok((BUILTIN, Reason::Forced)),
            ..case("env auto with a builtin fallback")
        },
        Case {
            policy: PolicyScopes {
                model: rp(Some("x"), Some("pi")),
                defaults: hp(None, Some("sometimes")),
                ..Default::default()
            },
            harnesses: vec![("x", yes(1))],
            expect: Err("unknown fallback `sometimes`"),
            ..case("a bad fallback outside the deciding scope is still an error")
        },
        Case {
            env: Some("x"),
            policy: PolicyScopes {
                provider: rp(None, Some("never")),
                ..Default::default()
            },
            harnesses: vec![("x", yes(1))],
            expect: Err("unknown fallback `never`"),
            ..case("a bad fallback is an error under an env force too")
        },
        // pinned sessions
        Case {
            pinned: Some("x"),
            env: Some("pi"),
            policy: PolicyScopes {
                model: rp(Some("pi"), None),
                ..Default::default()
            },
            harnesses: vec![("x", no())],
            expect: Ok(("x", Reason::Pinned)),
            ..case("pinned runtime beats env and config")
        },
        Case {
            pinned: Some("pi"),
            harnesses: vec![("x", yes(9))],
            expect: Ok((BUILTIN, Reason::Pinned)),
            ..case("pinned built-in stays built-in")
        },
        Case {
            pinned: Some("gone"),
            expect: Err("recorded on the session"),
            ..case("pinned harness no longer registered")
        },
        // implicit codex
        Case {
            route: route("openai-responses", "https://api.openai.com/v1", false),
            harnesses: vec![("codex", yes(1))],
            expect: Ok(("codex", Reason::AutoPlugin)),
            ..case("codex on the official Platform Responses route")
        },
        Case {
            route: route(
                "openai-responses",
                "https://chatgpt.com/backend-api/codex",
                false,
            ),
            harnesses: vec![("codex", yes(1))],
            expect: Ok(("codex", Reason::AutoPlugin)),
            ..case("codex on the ChatGPT Responses route")
        },
        Case {
            route: route("openai-completions", "https://api.openai.com/v1", false),
            harnesses: vec![("codex", yes(1))],
            ..case("Completions adapter stays on openclaw")
        },
        Case {
            route: route("openai-responses", "https://proxy.example.com/v1", false),
            harnesses: vec![("codex", yes(1))],
            ..case("custom endpoint stays on openclaw")
        },
        Case {
            route: route("openai-responses", "https://api.openai.com/v1", true),
            harnesses: vec![("codex", yes(1))],
            ..case("authored params stay on openclaw")
        },
        Case {
            route: route("openai-responses", "http://api.openai.com/v1", false),
            harnesses: vec![("codex", yes(1))],
            expect: Err("must use https"),
            ..case("official endpoint over plaintext http rejected")
        },
        Case {
            route: route("openai-responses", "http://user@api.openai.com/v1", false),
            expect: Err("must use https"),
            ..case("userinfo does not hide an official host")
        },
        Case {
            route: route("openai-completions", "http://api.openai.com./v1", false),
            expect: Err("must use https"),
            ..case("a trailing dot does not hide an official host")
        },
        Case {
            route: route("anthropic-messages", "HTTP://API.ANTHROPIC.COM:80", false),
            expect: Err("must use https"),
            ..case("case and port do not hide an official host")
        },
        Case {
            route: route("openai-responses", "https://api.openai.com/v1", true),
            harnesses: vec![("codex", yes(1)), ("plan-act", yes(0))],
            expect: Ok(("plan-act", Reason::AutoPlugin)),
            ..case("other harnesses still claim an ineligible codex route")
        },
    ];
    for c in &cases {
        run(c);
    }
}

#[test]
fn codex_eligibility_is_exact() {
    assert!(codex_eligible(&route(
        "openai-responses",
        "https://api.openai.com/v1/",
        false
    )));
    assert!(!codex_eligible(&route(
        "openai-responses",
        "https://api.openai.com/v2",
        false
    )));
    assert!(!codex_eligible(&route(
        "anthropic-messages",
        "https://api.openai.com/v1",
        false
    )));
}
