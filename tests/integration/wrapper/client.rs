//! A database client run under eatmydata gets a note once (the server is
//! what syncs), and still runs.

use std::process::Command;

use super::{eatmydata, stderr};
use crate::common::{command, library};

#[test]
fn a_database_client_gets_a_note_once_and_still_runs() {
    let client = eatmydata(&["psql", "--version"]);
    assert!(client.status.success());
    assert!(String::from_utf8_lossy(&client.stdout).starts_with("psql (PostgreSQL)"));
    let notes: Vec<String> = stderr(&client).lines().map(str::to_owned).collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("eatmydata: psql is a database client: the server"),
        "{notes:?}"
    );
    // Silenced, for a server already under eatmydata.
    library();
    let silenced = Command::new(command())
        .args(["psql", "--version"])
        .env("EATMYDATA_CLIENT_NOTICE", "0")
        .env_remove("LD_PRELOAD")
        .output()
        .expect("run eatmydata");
    assert!(silenced.status.success());
    assert_eq!(stderr(&silenced), "");
    // The control: a program that does its own syncing gets no note.
    let sqlite = eatmydata(&["sqlite3", "--version"]);
    assert!(sqlite.status.success());
    assert_eq!(stderr(&sqlite), "");
}
