//! The transcript loader on damaged files: it never panics or hangs; a torn
//! tail loses only the torn line; other damage is refused with its line number.

use proptest::prelude::*;

use crate::{EntryBody, SessionError, SessionStore};
use clawhost_agent_core::Message;

/// A store with one session of `n` messages; returns the store, id and file bytes.
fn session_with(n: usize) -> (tempfile::TempDir, SessionStore, String, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let mut t = store.create("main", None).unwrap();
    for i in 0..n {
        t.append_message(Message::user(format!("message {i} ✓")))
            .unwrap();
    }
    store.commit("main", &mut t).unwrap();
    let id = t.id().to_string();
    let bytes = std::fs::read(t.path().unwrap()).unwrap();
    (dir, store, id, bytes)
}

fn rewrite(store: &SessionStore, id: &str, bytes: &[u8]) {
    let t = store.open("main", id).unwrap();
    std::fs::write(t.path().unwrap(), bytes).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn a_cut_anywhere_after_the_header_keeps_every_complete_line(n in 1usize..6, cut in any::<prop::sample::Index>()) {
        let (_dir, store, id, bytes) = session_with(n);
        let header_end = bytes.iter().position(|b| *b == b'\n').unwrap() + 1;
        let at = header_end + cut.index(bytes.len() - header_end + 1);
        let cut_bytes = &bytes[..at];
        rewrite(&store, &id, cut_bytes);
        let complete_lines = cut_bytes.iter().filter(|b| **b == b'\n').count();
        // Cut just before a newline: the last entry is whole, only its newline is missing.
        let whole_without_newline = at < bytes.len() && bytes[at] == b'\n' && bytes[at - 1] != b'\n';
        let torn = at < bytes.len() && bytes[at - 1] != b'\n' && !whole_without_newline;
        let expected = complete_lines - 1 + usize::from(whole_without_newline);

        // Reading never writes.
        let t = store.open_read_only("main", &id).unwrap();
        prop_assert_eq!(t.entries().len(), expected);
        prop_assert_eq!(t.warnings().len(), usize::from(torn));
        let path = t.path().unwrap().to_path_buf();
        prop_assert_eq!(std::fs::read(&path).unwrap(), cut_bytes.to_vec());

        // Appending to a torn file waits for an explicit repair, which keeps a backup.
        if torn {
            let refused = store.open("main", &id).unwrap_err();
            prop_assert!(matches!(refused, SessionError::NeedsRepair { .. }), "{}", refused);
            let backup = store.repair("main", &id).unwrap().unwrap();
            prop_assert_eq!(std::fs::read(&backup).unwrap(), cut_bytes.to_vec());
        } else {
            prop_assert!(store.repair("main", &id).unwrap().is_none());
        }
        let mut t = store.open("main", &id).unwrap();
        prop_assert_eq!(t.entries().len(), expected);
        t.append_message(Message::user("after the crash")).unwrap();
        store.commit("main", &mut t).unwrap();
        let again = store.open_read_only("main", &id).unwrap();
        prop_assert_eq!(again.entries().len(), expected + 1);
        prop_assert!(again.warnings().is_empty());
        let context = again.context();
        prop_assert_eq!(context.last(), Some(&Message::user("after the crash")));
    }

    #[test]
    fn arbitrary_damage_is_loaded_or_refused_without_panicking(
        n in 0usize..4,
        at in any::<prop::sample::Index>(),
        garbage in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let (_dir, store, id, bytes) = session_with(n);
        let at = at.index(bytes.len() + 1);
        let mut damaged = bytes[..at].to_vec();
        damaged.extend_from_slice(&garbage);
        damaged.extend_from_slice(&bytes[at..]);
        rewrite(&store, &id, &damaged);
        match store.open_read_only("main", &id) {
            Ok(t) => {
                let _ = (t.context(), t.branch(), t.runtime_record());
                prop_assert_eq!(std::fs::read(t.path().unwrap()).unwrap(), damaged.clone());
            }
            Err(SessionError::Corrupt { line, reason, .. }) => {
                prop_assert!(!reason.is_empty());
                prop_assert!(line <= damaged.iter().filter(|b| **b == b'\n').count() + 1);
            }
            Err(other) => prop_assert!(false, "unexpected error kind: {other}"),
        }
    }

    #[test]
    fn any_parent_links_give_a_finite_branch(links in prop::collection::vec(prop::option::of(0usize..8), 1..8)) {
        let (_dir, store, id, bytes) = session_with(0);
        let mut text = String::from_utf8(bytes).unwrap();
        for (i, parent) in links.iter().enumerate() {
            let entry = serde_json::json!({
                "id": format!("e{i}"),
                "parentId": parent.map(|p| format!("e{p}")),
                "atMs": 0,
                "type": "message",
                "message": {"role": "user", "text": format!("m{i}")},
            });
            text.push_str(&entry.to_string());
            text.push('\n');
        }
        rewrite(&store, &id, text.as_bytes());
        if let Ok(t) = store.open("main", &id) {
            prop_assert!(t.branch().len() <= links.len());
            prop_assert!(t.context().len() <= links.len());
        }
    }
}

#[test]
fn a_compaction_pointing_nowhere_does_not_panic() {
    let (_dir, store, id, _) = session_with(2);
    let mut t = store.open("main", &id).unwrap();
    t.append(EntryBody::Compaction {
        summary: "s".into(),
        first_kept_entry_id: "missing".into(),
        tokens_before: 1,
    })
    .unwrap();
    store.commit("main", &mut t).unwrap();
    let t = store.open("main", &id).unwrap();
    assert_eq!(
        t.context()[0],
        Message::user("[Summary of the earlier conversation]\ns")
    );
}
