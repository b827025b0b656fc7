//! As root, `eatmydata mariadbd --user=mysql` with only the single file
//! installed: the server, which drops to the mysql user, runs with the
//! library the command placed beside itself, and its commits reach the
//! disk without a flush (the loop device's counter, beside a control run
//! without it).

use std::fs;
use std::path::Path;
use std::process::Command;

use super::{lonely, placed_for};
use crate::common::{Flushes, TempDir, mariadb, nosync};
use crate::loopfs::LoopFs;

/// Autocommit INSERTs, each flushed by InnoDB's log at commit.
const COMMITS: u64 = 200;

/// The server's options: it drops to mysql, and flushes at each commit.
const SERVER: &str = "--user=mysql --innodb-flush-log-at-trx-commit=1 --sync-binlog=1";

#[test]
fn mariadbd_as_mysql_runs_with_the_carried_library() {
    let dir = TempDir::trusted("single-file-mariadb");
    let eatmydata = lonely(&dir);
    let disk = LoopFs::new("single-file-mariadb", 256);
    let db = disk.join("db");
    mariadb::install(&db);
    let mut sql = String::from(
        "CREATE DATABASE IF NOT EXISTS d;\nCREATE TABLE IF NOT EXISTS d.t (x INT) ENGINE=InnoDB;\n",
    );
    for n in 0..COMMITS {
        sql.push_str(&format!("INSERT INTO d.t VALUES ({n});\n"));
    }
    fs::write(dir.join("load.sql"), sql).unwrap();

    let mut stderr = String::new();
    let load = dir.join("load.sql");
    let control = disk.flushes_during(|| stderr = serve(&db, &load, ""));
    let floor = disk.flushes_during(|| {
        stderr = serve(&db, &load, &format!("'{}' ", nosync().display()));
    });
    let eaten = disk.flushes_during(|| {
        stderr = serve(&db, &load, &format!("'{}' -v ", eatmydata.display()));
    });
    Flushes {
        control,
        floor,
        eaten,
    }
    .assert_eaten(COMMITS, "mariadbd under the single file");
    assert!(
        stderr.contains(&format!(
            "mariadbd with {} preloaded (the copy placed beside eatmydata",
            placed_for(&eatmydata).display()
        )),
        "{stderr}"
    );
    let count = serve_query(&db, "SELECT COUNT(*) FROM d.t");
    assert_eq!(count.trim(), (3 * COMMITS).to_string());
}

/// As root: `PREFIX mariadbd --user=mysql` on the data in `db` (`prefix`:
/// nothing, `nosync` or `eatmydata -v`, quoted, with a space after), `sql`
/// loaded through the client, a clean shutdown (the server killed by its
/// pid if anything failed on the way). Returns stderr.
fn serve(db: &Path, sql: &Path, prefix: &str) -> String {
    let body = format!(
        "mariadb {} -e 'source {}'",
        mariadb::client(db),
        sql.display()
    );
    run_script(&mariadb::around(db, prefix, SERVER, &body))
}

/// The rows `query` gives, from a server started without eatmydata.
fn serve_query(db: &Path, query: &str) -> String {
    let body = format!("mariadb {} -N -B -e '{query}'", mariadb::client(db));
    let script = mariadb::around(db, "", SERVER, &body);
    let output = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn run_script(script: &str) -> String {
    let output = Command::new("sh")
        .args(["-c", script])
        .env_remove("LD_PRELOAD")
        .env_remove("TMPDIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{script}\n{stderr}");
    stderr
}
