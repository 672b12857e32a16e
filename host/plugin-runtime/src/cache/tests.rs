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

    // A valid artifact and its tag file copied under another component's
    // name do not verify.
    let other = "cd".repeat(32);
    let other_file = cache.path(cache.disk.as_ref().unwrap(), &other);
    std::fs::copy(&file, &other_file).unwrap();
    std::fs::copy(artifact::tag_path(&file), artifact::tag_path(&other_file)).unwrap();
    assert_eq!(
        cache.load(&engine, &other, EMPTY).unwrap().1,
        CacheOutcome::Compiled
    );

    // A tag file whose stamp line is forged to the artifact's current stamp
    // does not let a changed artifact through: its record tag fails, so the
    // bytes are checked.
    std::thread::sleep(std::time::Duration::from_millis(10));
    let mut bytes = std::fs::read(&file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    let tag_file = artifact::tag_path(&file);
    let record = std::fs::read_to_string(&tag_file).unwrap();
    let mut lines: Vec<&str> = record.lines().collect();
    let now = owned_path::stamp(&file, u64::MAX).unwrap();
    lines[2] = now.as_str();
    std::fs::write(&tag_file, lines.join("\n")).unwrap();
    assert_eq!(
        cache.load(&engine, &sha, EMPTY).unwrap().1,
        CacheOutcome::Compiled
    );

    // A cache copied elsewhere (every stamp new) is checked byte by byte
    // once, then served from its re-recorded stamps.
    let moved = root.path().join("moved");
    std::fs::create_dir(&moved).unwrap();
    for name in [file.clone(), tag_file.clone()] {
        std::fs::copy(&name, moved.join(name.file_name().unwrap())).unwrap();
    }
    let cache3 = ComponentCache::open(&engine, Some(moved.clone()), Some(key.clone())).unwrap();
    let copied = cache3.path(cache3.disk.as_ref().unwrap(), &sha);
    let stamp_line = |f: &Path| {
        std::fs::read_to_string(artifact::tag_path(f))
            .unwrap()
            .lines()
            .nth(2)
            .unwrap()
            .to_string()
    };
    assert_ne!(
        stamp_line(&copied),
        owned_path::stamp(&copied, u64::MAX).unwrap().as_str()
    );
    assert_eq!(
        cache3.load(&engine, &sha, EMPTY).unwrap().1,
        CacheOutcome::Hit
    );
    assert_eq!(
        stamp_line(&copied),
        owned_path::stamp(&copied, u64::MAX).unwrap().as_str()
    );

    // An artifact of the previous format (no tag file) is replaced silently.
    std::fs::remove_file(&tag_file).unwrap();
    std::fs::write(&file, b"clawhost-cwasm2\nold").unwrap();
    assert_eq!(
        cache.load(&engine, &sha, EMPTY).unwrap().1,
        CacheOutcome::Compiled
    );
    assert_eq!(
        cache.load(&engine, &sha, EMPTY).unwrap().1,
        CacheOutcome::Hit
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

/// A cache in `root/cache`, keyed by `root/state/key`.
fn cache_under(root: &Path) -> ComponentCache {
    ComponentCache::open(
        &engine(),
        Some(root.join("cache")),
        Some(root.join("state").join("key")),
    )
    .unwrap()
}

#[test]
fn a_remembered_digest_serves_only_the_unchanged_file_and_only_if_it_verifies() {
    let root = tempfile::tempdir().unwrap();
    let cache = cache_under(root.path());
    let file = root.path().join("plugin.wasm");
    std::fs::write(&file, b"first").unwrap();
    let read = |f: &Path| crate::owned_path::read_stamped(f, 1 << 20).unwrap();
    let (bytes, stamp) = read(&file);
    let first = cache.digest(&file, stamp.as_ref(), &bytes);
    assert_eq!(first, crate::sha256_hex(b"first"));
    // Unchanged: the record answers (the bytes passed are not even hashed).
    let (_, stamp) = read(&file);
    assert_eq!(cache.digest(&file, stamp.as_ref(), b"ignored"), first);
    // Any write moves the stamp: hashed again.
    std::thread::sleep(std::time::Duration::from_millis(10));
    std::fs::write(&file, b"other").unwrap();
    let (bytes, stamp) = read(&file);
    assert_eq!(
        cache.digest(&file, stamp.as_ref(), &bytes),
        crate::sha256_hex(b"other")
    );
    // A forged record (another sha under the current stamp) does not verify.
    let records = root.path().join("cache").join("digests");
    let record = std::fs::read_dir(&records)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(&record).unwrap();
    let forged = text.replace(&crate::sha256_hex(b"other"), &"00".repeat(32));
    std::fs::write(&record, forged).unwrap();
    let (bytes, stamp) = read(&file);
    assert_eq!(
        cache.digest(&file, stamp.as_ref(), &bytes),
        crate::sha256_hex(b"other")
    );
    // Without a stamp (the file changed while read) nothing is remembered.
    assert_eq!(cache.digest(&file, None, b"x"), crate::sha256_hex(b"x"));
}

#[test]
fn a_digest_recorded_through_any_path_is_remembered_by_the_canonical_one() {
    let root = tempfile::tempdir().unwrap();
    let cache = cache_under(root.path());
    let package = root.path().join("pkg");
    std::fs::create_dir(&package).unwrap();
    std::fs::write(package.join("plugin.wasm"), b"component").unwrap();
    // Recorded as a load reads it: through the package's own spelling.
    let spelled = package.join(".").join("plugin.wasm");
    let (bytes, stamp) = crate::owned_path::read_stamped(&spelled, 1 << 20).unwrap();
    let sha = cache.digest(&spelled, stamp.as_ref(), &bytes);
    // Looked up as a warm start does: by the canonical path, without reading.
    let canonical = spelled.canonicalize().unwrap();
    assert_ne!(canonical.as_os_str(), spelled.as_os_str());
    assert_eq!(cache.remembered(&canonical, &stamp.unwrap()), Some(sha));
}

#[test]
fn hosts_starting_together_agree_on_one_cache_key() {
    // Found by CI: parallel test binaries on a fresh clone raced to create
    // the key, and the loser failed with "File exists".
    for _ in 0..20 {
        let root = tempfile::tempdir().unwrap();
        let key = root.path().join("state").join("key");
        let keys: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| load_or_create_key(&key)))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let first = keys[0].as_ref().expect("no host fails");
        for k in &keys {
            assert_eq!(k.as_ref().expect("no host fails"), first);
        }
    }
}

#[test]
fn the_cache_keeps_to_its_size_and_age_bounds_least_recently_used_first() {
    let engine = engine();
    let root = tempfile::tempdir().unwrap();
    let open = |max_bytes: u64| {
        ComponentCache::open(
            &engine,
            Some(root.path().join("cache")),
            Some(root.path().join("state").join("key")),
        )
        .unwrap()
        .with_limits(max_bytes, std::time::Duration::from_secs(3600))
    };
    let cache = open(u64::MAX);
    let (a, b) = ("aa".repeat(32), "bb".repeat(32));
    cache.load(&engine, &a, EMPTY).unwrap();
    // A remembered declaration of each: a's goes with a's artifact.
    let key = |sha256: &str| declarations::DeclarationKey {
        sha256: sha256.into(),
        api: "0.2",
        config_json: "{}".into(),
        grants: String::new(),
    };
    let declared = crate::abi::Declared {
        harnesses: vec!["h".into()],
        ..Default::default()
    };
    let facts = crate::api_version::ComponentFacts {
        exports: vec!["openclaw:plugin/harness@0.2.1".into()],
        imports: vec![("wasi:io/streams@0.2.6".into(), true)],
        harness: true,
    };
    let remembered = Some((declared.clone(), facts.clone()));
    cache.remember_declaration(&key(&a), &declared, &facts);
    cache.remember_declaration(&key(&b), &declared, &facts);
    assert_eq!(cache.remembered_declaration(&key(&a)), remembered);
    let one = std::fs::metadata(cache.path(cache.disk.as_ref().unwrap(), &a))
        .unwrap()
        .len();
    // Room for one artifact: compiling b evicts a (least recently used).
    let cache = open(one);
    std::thread::sleep(std::time::Duration::from_millis(20));
    cache.load(&engine, &b, EMPTY).unwrap();
    assert!(!cache.is_cached(&a) && cache.is_cached(&b));
    assert_eq!(cache.remembered_declaration(&key(&a)), None);
    assert_eq!(cache.remembered_declaration(&key(&b)), remembered);
    // An artifact unused past the age bound goes at the next sweep.
    // (Its last use is its tag file's modification time.)
    let path = artifact::tag_path(&cache.path(cache.disk.as_ref().unwrap(), &b));
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    std::fs::File::options()
        .append(true)
        .open(&path)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let evicted = cache.evict(None);
    assert_eq!(evicted.files, 1);
    assert!(!cache.is_cached(&b) && !path.exists());
}
