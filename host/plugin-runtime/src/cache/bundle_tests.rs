use std::path::Path;

use super::bundle::{bundle_file, Bundle};
use super::tests::cache_under;
use super::ComponentCache;

/// A start's bundle of `path`, after reading `files` through it: each
/// file's bytes (or error) and whether the bundle came out stale.
fn start(
    cache: &ComponentCache,
    path: &Path,
    files: &[&Path],
) -> (Vec<Result<Vec<u8>, String>>, bool) {
    let bundle = cache.bundle(path).settling_at_once();
    let read = files
        .iter()
        .map(|f| {
            bundle
                .read(f, 1 << 20)
                .map(|b| b.into_owned())
                .map_err(|e| e.to_string())
        })
        .collect();
    let stale = bundle.is_stale();
    cache.keep_bundle(&bundle);
    (read, stale)
}

#[test]
fn a_bundle_serves_a_file_only_while_its_stamp_has_not_moved() {
    let root = tempfile::tempdir().unwrap();
    let cache = cache_under(root.path());
    let plugins = root.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    let (a, b) = (plugins.join("a.json"), plugins.join("b.json"));
    std::fs::write(&a, "first a").unwrap();
    std::fs::write(&b, "first b").unwrap();
    let both = [a.as_path(), b.as_path()];

    // The first start reads both from disk and keeps them; the next takes
    // both from the bundle and leaves it as it is.
    let (read, stale) = start(&cache, &plugins, &both);
    assert_eq!(read, [Ok(b"first a".to_vec()), Ok(b"first b".to_vec())]);
    assert!(stale);
    let kept = std::fs::read_dir(root.path().join("cache/bundles"))
        .unwrap()
        .count();
    assert_eq!(kept, 1);
    let (read, stale) = start(&cache, &plugins, &both);
    assert_eq!(read, [Ok(b"first a".to_vec()), Ok(b"first b".to_vec())]);
    assert!(!stale, "an unmoved bundle is not rewritten");
    // A file that is not there (a subdirectory without a manifest) is an
    // error as ever, and does not make the bundle stale.
    let missing = plugins.join("none.json");
    let (read, stale) = start(&cache, &plugins, &[&a, &b, &missing]);
    assert!(read[2].is_err());
    assert!(!stale, "a missing file is nothing to bundle");

    // A file written since is read again, not served stale (its length
    // moves too, so a file system with a coarse clock cannot hide it; the
    // settle test covers a write in the same tick).
    std::fs::write(&a, "again, a").unwrap();
    let (read, stale) = start(&cache, &plugins, &both);
    assert_eq!(read[0], Ok(b"again, a".to_vec()));
    assert!(stale);
    assert!(!start(&cache, &plugins, &both).1);

    // A file replaced by a symlink is refused, as a direct read refuses it.
    std::fs::remove_file(&b).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    let (read, _) = start(&cache, &plugins, &both);
    assert!(read[1].is_err(), "{:?}", read[1]);
    std::fs::remove_file(&b).unwrap();
    std::fs::write(&b, "second b").unwrap();
    let (read, _) = start(&cache, &plugins, &both);
    assert_eq!(read[1], Ok(b"second b".to_vec()));

    // A file no start reads any more (its package went) is dropped: the
    // bundle is rewritten once without it.
    let (_, stale) = start(&cache, &plugins, &[a.as_path()]);
    assert!(stale);
    let (read, stale) = start(&cache, &plugins, &[a.as_path()]);
    assert_eq!(read, [Ok(b"again, a".to_vec())]);
    assert!(!stale);
}

#[test]
fn a_file_that_changed_just_now_is_not_kept() {
    let root = tempfile::tempdir().unwrap();
    let cache = cache_under(root.path());
    let file = root.path().join("m.json");
    std::fs::write(&file, "manifest").unwrap();
    for _ in 0..2 {
        let bundle = cache.bundle(root.path());
        assert_eq!(&*bundle.read(&file, 1 << 20).unwrap(), b"manifest");
        assert!(bundle.is_stale(), "read from disk again: it was not kept");
        cache.keep_bundle(&bundle);
    }
}

#[test]
fn a_bundle_is_used_only_whole_and_for_its_own_plugin_path() {
    let root = tempfile::tempdir().unwrap();
    let cache = cache_under(root.path());
    let (one, two) = (root.path().join("one"), root.path().join("two"));
    let file = one.join("m.json");
    std::fs::create_dir(&one).unwrap();
    std::fs::write(&file, "manifest").unwrap();
    start(&cache, &one, &[&file]);
    assert!(
        !start(&cache, &one, &[&file]).1,
        "a verified bundle serves it"
    );

    // Copied under the other path's name: it does not verify there (the
    // file is read from disk, so that bundle comes out stale).
    let disk = cache.disk.as_ref().unwrap();
    let kept = bundle_file(disk, &one.to_string_lossy());
    std::fs::copy(&kept, bundle_file(disk, &two.to_string_lossy())).unwrap();
    let (read, stale) = start(&cache, &two, &[&file]);
    assert_eq!(read, [Ok(b"manifest".to_vec())]);
    assert!(stale, "a bundle moved to another plugin path is not used");

    // One flipped byte: not used either.
    let mut bytes = std::fs::read(&kept).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&kept, &bytes).unwrap();
    let (read, stale) = start(&cache, &one, &[&file]);
    assert_eq!(read, [Ok(b"manifest".to_vec())]);
    assert!(stale, "a bundle that does not verify is not used");
    assert!(
        !start(&cache, &one, &[&file]).1,
        "and it is rewritten whole"
    );
}

#[test]
fn without_a_cache_dir_files_are_read_and_nothing_is_kept() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("m.json");
    std::fs::write(&file, "manifest").unwrap();
    let bundle = Bundle::none().settling_at_once();
    assert_eq!(&*bundle.read(&file, 1 << 20).unwrap(), b"manifest");
    assert!(!bundle.is_stale());
    assert!(bundle.read(&file, 4).is_err(), "the size limit holds");
}
