//! MariaDB: a data folder made on the test's file system, the classic
//! import with InnoDB flushing its log at each commit by a server started
//! under the library, a clean shutdown; then read cold, and after a cut
//! with `--sync-at-exit`.

use super::*;
use crate::common::mariadb;

struct Mariadb;

/// `||` concatenates, as in the other engines' SQL.
const ANSI: &str = "SET SESSION sql_mode = 'PIPES_AS_CONCAT';";

/// The server's folder on the file system whose root is `root`.
fn folder(root: &Path) -> PathBuf {
    root.join("db")
}

impl Engine for Mariadb {
    fn name(&self) -> &'static str {
        "mariadb"
    }

    fn user(&self) -> &'static str {
        "mysql"
    }

    fn prepare(&self, fs: &LoopFs) {
        let dir = folder(fs.path());
        mariadb::install(&dir);
        let status = Command::new("sync")
            .arg("-f")
            .arg(&dir)
            .status()
            .expect("run sync");
        assert!(status.success());
    }

    fn sql(&self, table: &str, marker: &str) -> String {
        format!(
            "CREATE DATABASE IF NOT EXISTS d; USE d; {ANSI}\n{}",
            load_sql(table, marker)
        )
    }

    fn load(&self, root: &Path, sql: &Path) -> String {
        let durable = "--innodb-flush-log-at-trx-commit=1 --sync-binlog=1";
        let dir = folder(root);
        let body = format!(
            "mariadb {} -e 'source {}'",
            mariadb::client(&dir),
            sql.display()
        );
        mariadb::around(&dir, "", durable, &body)
    }

    fn read(&self, root: &Path, queries: &[String]) -> String {
        let dir = folder(root);
        let client = mariadb::client(&dir);
        let body: Vec<String> = queries
            .iter()
            .map(|query| format!("mariadb {client} -N -B -D d -e \"{ANSI} {query}\"; echo @@"))
            .collect();
        mariadb::around(&dir, "", "", &body.join("\n"))
    }
}

#[test]
fn mariadb_keeps_every_row_read_cold_and_after_a_cut_with_sync_at_exit() {
    cold_check(&Mariadb, 256);
}
