//! A note for the commonest way to get nothing from eatmydata: running a
//! database client under it. `eatmydata mysql db < dump.sql` preloads the
//! library into `mysql`, but every fsync is made by the server, another
//! process that eatmydata never touched; the import is exactly as slow, and
//! nothing would say so.
//!
//! Container clients (`docker run`, `podman run`, ...) are another case,
//! handled apart: `client/container.rs`.
//!
//! The note is said once, on stderr, and the command runs all the same:
//! the server may already be under eatmydata, which cannot be seen from
//! here. `EATMYDATA_CLIENT_NOTICE=0` silences it.

use std::ffi::OsStr;
use std::path::Path;

pub mod container;

/// The variable that silences the note when set and off (`0`, or empty).
pub const SILENCE: &str = crate::protocol::CLIENT_NOTICE;

/// Clients whose server does the syncing, with how to start that server
/// under eatmydata.
const CLIENTS: [(&str, &str); 13] = [
    ("mysql", "eatmydata mariadbd ... or eatmydata mysqld ..."),
    ("mariadb", "eatmydata mariadbd ..."),
    (
        "mysqlimport",
        "eatmydata mariadbd ... or eatmydata mysqld ...",
    ),
    ("mariadb-import", "eatmydata mariadbd ..."),
    ("mysqlsh", "eatmydata mysqld ..."),
    ("psql", "eatmydata pg_ctl start ..."),
    ("pg_restore", "eatmydata pg_ctl start ..."),
    ("pgbench", "eatmydata pg_ctl start ..."),
    ("mongosh", "eatmydata mongod ..."),
    ("mongorestore", "eatmydata mongod ..."),
    ("mongoimport", "eatmydata mongod ..."),
    ("redis-cli", "eatmydata redis-server ..."),
    ("clickhouse-client", "eatmydata clickhouse-server ..."),
];

/// The note for `command`, when it is a known client and the note is not
/// silenced by `silence`, the value of [`SILENCE`].
pub fn notice(command: &OsStr, silence: Option<&OsStr>) -> Option<String> {
    if silence.is_some_and(|value| !crate::protocol::switch_on(value.as_encoded_bytes())) {
        return None;
    }
    let name = Path::new(command).file_name()?.to_str()?;
    let (_, server) = CLIENTS.iter().find(|(client, _)| *client == name)?;
    Some(format!(
        "{name} is a database client: the server it talks to makes the syncs, and eatmydata \
         speeds it up only if the server runs under it ({server}; for a service, see \
         eatmydata(1), EXAMPLES). The command runs as asked. {SILENCE}=0 \
         silences this note."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_get_a_note_unless_silenced() {
        let note = notice(OsStr::new("/usr/bin/mysql"), None).unwrap();
        assert!(note.starts_with("mysql is a database client"), "{note}");
        assert!(note.contains("eatmydata mariadbd"), "{note}");
        assert!(notice(OsStr::new("psql"), Some(OsStr::new("1"))).is_some());
        assert!(notice(OsStr::new("psql"), Some(OsStr::new("0"))).is_none());
        assert!(notice(OsStr::new("psql"), Some(OsStr::new(""))).is_none());
    }

    #[test]
    fn other_programs_get_none() {
        for command in [
            "sqlite3",
            "mariadbd",
            "postgres",
            "pg_ctl",
            "mysqldump",
            "psqlx",
        ] {
            assert!(notice(OsStr::new(command), None).is_none(), "{command}");
        }
    }
}
