//! The `clawhost` binary is linked by `link/order-cc.sh`: the functions
//! `link/hot-functions.txt` lists come first in its code, found by their
//! hash-free names in whatever build this is, and its relative relocations
//! are packed where the C library supports that.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::collections::HashSet;
use std::io::Write;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_clawhost");
const LINK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/link");

/// What `program args` prints, which must succeed.
fn output(program: &str, args: &[&str], stdin: &[u8]) -> String {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{program} {args:?} failed");
    String::from_utf8(out.stdout).unwrap()
}

/// The fields of `readelf -S`'s line for section `name` from the name on
/// (name, type, address, offset, size, …), if the binary has it.
fn section(name: &str) -> Option<Vec<String>> {
    let sections = output("readelf", &["-SW", BIN], b"");
    sections.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        let at = f.iter().position(|w| *w == name)?;
        Some(f[at..].iter().map(|w| w.to_string()).collect())
    })
}

/// `.text`'s address and size.
fn text_section() -> (u64, u64) {
    let f = section(".text").expect("a .text section");
    let hex = |i: usize| u64::from_str_radix(&f[i], 16).unwrap();
    (hex(2), hex(4))
}

#[test]
fn listed_functions_come_first_and_together() {
    let nm = output("nm", &["--defined-only", "-n", "-S", BIN], b"");
    // The awk script reads `address type name`, as `nm` prints without -S.
    let plain: String = nm
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 4).then(|| format!("{} {} {}\n", f[0], f[2], f[3]))
        })
        .collect();
    let list = format!("list={LINK}/hot-functions.txt");
    let script = format!("{LINK}/hot-names.awk");
    let listed: HashSet<String> = output("awk", &["-v", &list, "-f", &script], plain.as_bytes())
        .lines()
        .map(str::to_string)
        .collect();
    assert!(
        listed.len() >= 1000,
        "only {} of this build's functions have a listed name: is hot-functions.txt current (link/profile.sh), and RUSTFLAGS unset (it replaces the v0 mangling of .cargo/config.toml)?",
        listed.len()
    );

    let (text, text_len) = text_section();
    // Code symbols in .text, by address: (address, size, listed?).
    let code: Vec<(u64, u64, bool)> = nm
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() != 4 || !matches!(f[2], "t" | "T" | "w" | "W") {
                return None;
            }
            let at = u64::from_str_radix(f[0], 16).ok()?;
            let size = u64::from_str_radix(f[1], 16).ok()?;
            (at >= text && at < text + text_len).then(|| (at, size, listed.contains(f[3])))
        })
        .collect();
    let first = code.first().expect("functions in .text");
    assert!(first.2, "the first function in .text is not a listed one");
    let end = code
        .iter()
        .filter(|c| c.2)
        .map(|c| c.0 + c.1)
        .max()
        .unwrap();
    // The linker moves whole input sections: a listed function that shares
    // one (as in an assembly object) brings its neighbours along, so a few
    // strays are expected, not thousands.
    let listed_at: HashSet<u64> = code.iter().filter(|c| c.2).map(|c| c.0).collect();
    let strays: Vec<&(u64, u64, bool)> = code
        .iter()
        .filter(|c| !c.2 && c.1 > 0 && c.0 < end && !listed_at.contains(&c.0))
        .collect();
    let stray_bytes: u64 = strays.iter().map(|c| c.1).sum();
    assert!(
        stray_bytes * 100 < end - text,
        "{} unlisted functions ({stray_bytes} bytes) lie among the listed ones (first at {:#x})",
        strays.len(),
        strays[0].0
    );
    // Together they are a small part of the code.
    assert!(
        end - text < text_len / 2,
        "the listed functions span {} of {} bytes",
        end - text,
        text_len
    );
}

#[test]
fn relative_relocations_are_packed_where_glibc_supports_them() {
    let version = output("getconf", &["GNU_LIBC_VERSION"], b"");
    let minor: u32 = version
        .trim()
        .strip_prefix("glibc 2.")
        .and_then(|v| v.split('.').next()?.parse().ok())
        .unwrap_or(0);
    assert_eq!(
        section(".relr.dyn").is_some(),
        minor >= 36,
        "glibc 2.{minor}: packed relocations expected exactly from 2.36"
    );
}
