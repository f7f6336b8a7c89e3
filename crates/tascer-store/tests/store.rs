//! Session store tests on a real SQLite file.

use tascer_core::{Message, UserContent, UserMessage};
use tascer_store::{NewSession, SessionStore, StoreError};

fn user(text: &str, session: &str) -> Message {
    Message::User(UserMessage::new(UserContent::Text(text.into()), session))
}

#[test]
fn messages_survive_reopening_and_rebuild_history() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("home/tascer.db");
    {
        let store = SessionStore::open(&path).unwrap();
        store
            .create_session(&NewSession {
                id: "s1",
                cwd: "/w",
                model: "m",
                forked_from: None,
            })
            .unwrap();
        store.append_message("s1", &user("first", "s1")).unwrap();
        store.append_message("s1", &user("second", "s1")).unwrap();
        store.update_totals("s1", 2, 0.5, "success").unwrap();
    }
    let store = SessionStore::open(&path).unwrap();
    let info = store.session("s1").unwrap().unwrap();
    assert_eq!(info.message_count, 2);
    assert_eq!(info.num_turns, 2);
    assert_eq!(info.first_prompt.as_deref(), Some("first"));
    assert_eq!(store.messages("s1").unwrap().len(), 2);
    assert_eq!(
        store.history("s1").unwrap().len(),
        1,
        "two user frames merge"
    );
}

#[test]
fn latest_for_cwd_and_fork() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open_in_home(dir.path()).unwrap();
    for id in ["a", "b"] {
        store
            .create_session(&NewSession {
                id,
                cwd: "/w",
                model: "m",
                forked_from: None,
            })
            .unwrap();
        store.append_message(id, &user(id, id)).unwrap();
    }
    assert_eq!(store.latest_for_cwd("/w").unwrap().unwrap().id, "b");
    assert!(store.latest_for_cwd("/other").unwrap().is_none());

    let fork = store.fork("a", "c").unwrap();
    assert_eq!(fork.forked_from.as_deref(), Some("a"));
    let copied = store.messages("c").unwrap();
    assert_eq!(copied.len(), 1);
    assert_eq!(copied[0].session_id(), "c");
    assert_eq!(store.messages("a").unwrap()[0].session_id(), "a");
}

#[test]
fn unknown_session_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open_in_home(dir.path()).unwrap();
    let err = store.history("nope").unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)));
    assert_eq!(
        err.to_string(),
        "No conversation found with session ID: nope"
    );
}

#[test]
fn duplicate_session_id_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open_in_home(dir.path()).unwrap();
    let new = NewSession {
        id: "x",
        cwd: "/w",
        model: "m",
        forked_from: None,
    };
    store.create_session(&new).unwrap();
    assert!(matches!(
        store.create_session(&new),
        Err(StoreError::AlreadyExists(_))
    ));
}

#[test]
fn corrupt_row_names_session_and_seq() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tascer.db");
    let store = SessionStore::open(&path).unwrap();
    store
        .create_session(&NewSession {
            id: "s",
            cwd: "/w",
            model: "m",
            forked_from: None,
        })
        .unwrap();
    store.append_message("s", &user("x", "s")).unwrap();
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute(
        "UPDATE messages SET data = '{broken' WHERE session_id = 's'",
        [],
    )
    .unwrap();
    let err = store.messages("s").unwrap_err();
    assert!(
        err.to_string()
            .contains("message 1 of session s is corrupt"),
        "{err}"
    );
}

#[test]
fn totals_are_stored_with_a_message_and_kept_without() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open(dir.path().join("tascer.db")).unwrap();
    store
        .create_session(&NewSession {
            id: "s1",
            cwd: "/w",
            model: "m",
            forked_from: None,
        })
        .unwrap();
    let totals = tascer_store::Totals {
        num_turns: 3,
        total_cost_usd: 0.25,
        status: "running".into(),
    };
    store
        .append_message_with_totals("s1", &user("first", "s1"), Some(&totals))
        .unwrap();
    let info = store.session("s1").unwrap().unwrap();
    assert_eq!(
        (info.num_turns, info.total_cost_usd, info.status.as_str()),
        (3, 0.25, "running")
    );
    assert_eq!(info.first_prompt.as_deref(), Some("first"));
    // A message without totals leaves them as they are.
    store.append_message("s1", &user("second", "s1")).unwrap();
    let info = store.session("s1").unwrap().unwrap();
    assert_eq!(
        (
            info.num_turns,
            info.total_cost_usd,
            info.status.as_str(),
            info.message_count
        ),
        (3, 0.25, "running", 2)
    );
}
