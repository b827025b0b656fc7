//! Nothing is lost on a clean shutdown: a database loaded under the library,
//! shut down cleanly and opened again without it holds every row.
//!
//! The expected rows and their checksum are computed here, from the same
//! model that wrote the SQL, not by the database; each test also shows that
//! the library really was in the writing process (strace sees it opened, or
//! `/proc/PID/maps` lists it) and that a control run does ask for syncs.

use std::fmt::Write as _;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Run, TempDir, command, library};

mod mariadb; // a server started as the mysql user, on a private socket
mod postgres; // a cluster run as the postgres user, on a private socket

const ROWS: u32 = 6000;
const BATCH: u32 = 30;

/// The rows the load leaves: inserted in batches, every 10th updated, every
/// 13th deleted.
fn expected_rows() -> Vec<String> {
    (1..=ROWS)
        .filter(|id| id % 13 != 0)
        .map(|id| {
            let updated = if id % 10 == 0 { " updated" } else { "" };
            format!("{id}|{}{updated}", value(id))
        })
        .collect()
}

fn value(id: u32) -> String {
    format!("row {id} {}", "abcdefghij".repeat((id % 23) as usize))
}

/// The load: one transaction per batch, so one commit (and sync) per batch.
fn load_sql() -> String {
    let mut sql = String::from("CREATE TABLE t (id integer PRIMARY KEY, v text NOT NULL);\n");
    for first in (1..=ROWS).step_by(BATCH as usize) {
        sql.push_str("BEGIN;\nINSERT INTO t VALUES ");
        let last = (first + BATCH - 1).min(ROWS);
        let values: Vec<String> = (first..=last)
            .map(|id| format!("({id}, '{}')", value(id)))
            .collect();
        sql.push_str(&values.join(", "));
        sql.push_str(";\nCOMMIT;\n");
    }
    sql.push_str("UPDATE t SET v = v || ' updated' WHERE id % 10 = 0;\n");
    sql.push_str("DELETE FROM t WHERE id % 13 = 0;\n");
    sql
}

/// What every engine is asked for when checking: one `id|v` line per row.
const READ_BACK: &str = "SELECT id || '|' || v FROM t ORDER BY id";

/// FNV-1a over the lines, each ended by a newline.
fn checksum<S: AsRef<str>>(lines: &[S]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in lines
        .iter()
        .flat_map(|line| line.as_ref().bytes().chain([b'\n']))
    {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Compares the rows read back with the model: count, checksum, first wrong row.
fn assert_rows(engine: &str, read_back: &str) {
    let got: Vec<&str> = read_back.lines().collect();
    let want = expected_rows();
    let first_wrong = got.iter().zip(&want).position(|(g, w)| g != w);
    assert!(
        got.len() == want.len() && checksum(&got) == checksum(&want),
        "{engine}: {} rows read back, {} expected; checksum {:x} vs {:x}; first difference at row index {first_wrong:?}",
        got.len(),
        want.len(),
        checksum(&got),
        checksum(&want)
    );
}

#[test]
fn sqlite_keeps_every_row_loaded_under_the_library() {
    let dir = TempDir::new("durability-sqlite");
    fs::write(
        dir.join("load.sql"),
        format!(
            "PRAGMA journal_mode=WAL;\nPRAGMA synchronous=FULL;\n{}",
            load_sql()
        ),
    )
    .expect("write the load");
    let load = |db: &str, eat: bool| {
        let program = if eat {
            command()
        } else {
            PathBuf::from("sqlite3")
        };
        let run = Run::new(program)
            .cwd(dir.path())
            .trace(&["fsync", "fdatasync", "openat"]);
        let run = if eat { run.arg("sqlite3") } else { run };
        run.args([db, ".read load.sql"]).run().success()
    };

    let eaten = load("eaten.db", true);
    let loaded: Vec<&str> = eaten.calls_with("libeatmydata.so");
    assert!(
        loaded.iter().any(|call| !call.contains("ENOENT")),
        "sqlite3 did not load the library:\n{loaded:?}"
    );
    let syncs = eaten.calls_of("fsync").len() + eaten.calls_of("fdatasync").len();
    assert_eq!(syncs, 0, "syncs reached the kernel under the library");

    let control = load("control.db", false);
    let syncs = control.calls_of("fsync").len() + control.calls_of("fdatasync").len();
    assert!(
        syncs as u32 >= ROWS / BATCH,
        "the control load asked for only {syncs} syncs"
    );

    // sqlite3 has exited: the database is closed and its WAL checkpointed.
    for db in ["eaten.db", "control.db"] {
        let check = Run::new("sqlite3")
            .cwd(dir.path())
            .args([db, "PRAGMA integrity_check;"])
            .run()
            .success();
        assert_eq!(check.stdout().trim(), "ok", "{db}");
        let rows = Run::new("sqlite3")
            .cwd(dir.path())
            .args([db, READ_BACK])
            .run()
            .success();
        assert_rows(db, &rows.stdout());
    }
}

/// A private folder under /tmp that the `postgres` user owns: the scratch
/// folders under target/ may not be reachable by that user.
struct ServerDir(PathBuf);

impl ServerDir {
    fn new(label: &str, user: &str) -> ServerDir {
        let scratch = TempDir::new(label);
        let name = scratch
            .path()
            .file_name()
            .expect("a folder name")
            .to_owned();
        let path = Path::new("/tmp").join(name);
        let _ = fs::remove_dir_all(&path);
        fs::create_dir(&path).expect("create the server folder");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o700)).expect("make it private");
        let status = Command::new("chown")
            .arg(format!("{user}:"))
            .arg(&path)
            .status()
            .expect("run chown");
        assert!(status.success(), "chown {user} {}", path.display());
        ServerDir(path)
    }
}

impl Drop for ServerDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// For each live process of `pids` (one exiting has no mappings left),
/// whether it has the library mapped.
fn mapping_the_library(pids: &[u32]) -> Vec<(u32, bool)> {
    pids.iter()
        .filter_map(|&pid| {
            let maps = fs::read_to_string(format!("/proc/{pid}/maps"))
                .ok()
                .filter(|maps| !maps.is_empty())?;
            Some((pid, maps.contains("libeatmydata.so")))
        })
        .collect()
}

#[test]
fn checksum_tells_rows_apart() {
    // The oracle itself: a changed, missing or reordered row changes it.
    let rows = expected_rows();
    let mut changed = rows.clone();
    changed[100].push('x');
    let mut swapped = rows.clone();
    swapped.swap(1, 2);
    assert_ne!(checksum(&rows), checksum(&changed));
    assert_ne!(checksum(&rows), checksum(&swapped));
    assert_ne!(checksum(&rows), checksum(&rows[1..]));
    assert_eq!(rows.len() as u32, ROWS - ROWS / 13);
}
