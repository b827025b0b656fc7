//! SQLite: the sqlite3 shell loads a WAL database with synchronous=FULL
//! and exits (its clean shutdown); then read cold, and after a cut with
//! `--sync-at-exit`. Its syncs are also counted under strace.

use super::*;

struct Sqlite;

impl Engine for Sqlite {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn user(&self) -> &'static str {
        "root"
    }

    fn prepare(&self, _fs: &LoopFs) {}

    fn sql(&self, table: &str, marker: &str) -> String {
        format!(
            "PRAGMA journal_mode=WAL;\nPRAGMA synchronous=FULL;\n{}",
            load_sql(table, marker)
        )
    }

    fn load(&self, root: &Path, sql: &Path) -> String {
        format!("sqlite3 '{}/db' '.read {}'", root.display(), sql.display())
    }

    fn read(&self, root: &Path, queries: &[String]) -> String {
        let db = format!("{}/db", root.display());
        let mut script = format!("test \"$(sqlite3 '{db}' 'PRAGMA integrity_check')\" = ok");
        for query in queries {
            script.push_str(&format!(" && sqlite3 '{db}' \"{query}\" && echo @@"));
        }
        script
    }
}

#[test]
fn sqlite_keeps_every_row_read_cold_and_after_a_cut_with_sync_at_exit() {
    cold_check(&Sqlite, 64);
}

#[test]
fn sqlite_asks_for_syncs_without_the_library_and_none_reach_the_kernel_with_it() {
    let dir = TempDir::new("durability-sqlite-syncs");
    fs::write(dir.join("load.sql"), Sqlite.sql("t", "marker")).expect("write the load");
    let load = |db: &str, eat: bool| {
        let run = if eat {
            Run::new(command()).arg("sqlite3")
        } else {
            Run::new("sqlite3")
        };
        let run = run.cwd(dir.path()).trace(&["fsync", "fdatasync", "openat"]);
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
}
