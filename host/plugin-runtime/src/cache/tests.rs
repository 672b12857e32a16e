use std::os::unix::fs::PermissionsExt;

use super::*;

fn engine() -> Engine {
    let mut config = wasmtime::Config::new();
    config.wasm_component_model(true);
    Engine::new(&config).unwrap()
}

/// The smallest component.
const EMPTY: &[u8] = b"\0asm\x0d\0\x01\0";

#[test]
fn an_artifact_is_reused_only_while_its_tag_verifies() {
    let engine = engine();
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("cache");
    let key = root.path().join("state").join("key");
    let cache = ComponentCache::open(&engine, Some(dir.clone()), Some(key.clone())).unwrap();
    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    assert_eq!(
        std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let sha = "ab".repeat(32);
    assert_eq!(
        cache.load(&engine, &sha, EMPTY).unwrap().1,
        CacheOutcome::Compiled
    );
    assert_eq!(
        cache.load(&engine, &sha, EMPTY).unwrap().1,
        CacheOutcome::Hit
    );

    // One flipped byte of native code: refused and recompiled, then trusted again.
    let file = cache.path(cache.disk.as_ref().unwrap(), &sha);
    let mut bytes = std::fs::read(&file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    assert_eq!(
        cache.load(&engine, &sha, EMPTY).unwrap().1,
        CacheOutcome::Compiled
    );
    assert_eq!(
        cache.load(&engine, &sha, EMPTY).unwrap().1,
        CacheOutcome::Hit
    );

    // A valid artifact moved under another component's name does not verify.
    let other = "cd".repeat(32);
    std::fs::copy(&file, cache.path(cache.disk.as_ref().unwrap(), &other)).unwrap();
    assert_eq!(
        cache.load(&engine, &other, EMPTY).unwrap().1,
        CacheOutcome::Compiled
    );

    // Another key (another user, another machine) verifies nothing.
    let key2 = root.path().join("state2").join("key");
    let cache2 = ComponentCache::open(&engine, Some(dir.clone()), Some(key2)).unwrap();
    assert_eq!(
        cache2.load(&engine, &sha, EMPTY).unwrap().1,
        CacheOutcome::Compiled
    );
}

#[test]
fn unsafe_cache_dirs_and_keys_are_refused() {
    let engine = engine();
    let root = tempfile::tempdir().unwrap();
    let real = root.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = root.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let key = root.path().join("state").join("key");
    let err = ComponentCache::open(&engine, Some(link), Some(key.clone()))
        .err()
        .unwrap();
    assert!(err.to_string().contains("symlink"), "{err}");

    // A group-writable dir of ours is made private.
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o777)).unwrap();
    ComponentCache::open(&engine, Some(real.clone()), Some(key.clone())).unwrap();
    assert_eq!(
        std::fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o700
    );

    // A key others can read is refused, and so is one inside the cache dir.
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = ComponentCache::open(&engine, Some(real.clone()), Some(key))
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("readable or writable by others"),
        "{err}"
    );
    let err = ComponentCache::open(&engine, Some(real.clone()), Some(real.join("k")))
        .err()
        .unwrap();
    assert!(err.to_string().contains("outside the cache dir"), "{err}");

    // A FIFO as the key never blocks the host.
    let fifo = root.path().join("state").join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let err = ComponentCache::open(&engine, Some(real), Some(fifo))
        .err()
        .unwrap();
    assert!(err.to_string().contains("regular file"), "{err}");
}
