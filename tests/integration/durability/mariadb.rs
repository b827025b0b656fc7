//! MariaDB: a data folder made on the test's file system, the classic
//! import with InnoDB flushing its log at each commit by a server started
//! under the library, a clean shutdown; then read cold, and after a cut
//! with `--sync-at-exit`.

use super::*;

struct Mariadb;

/// `||` concatenates, as in the other engines' SQL.
const ANSI: &str = "SET SESSION sql_mode = 'PIPES_AS_CONCAT';";

impl Mariadb {
    /// The server started (`options` added), `body`, a clean shutdown; the
    /// server killed if anything failed on the way.
    fn around(root: &Path, options: &str, body: &str) -> String {
        let dir = root.join("db");
        let at = |name: &str| dir.join(name).display().to_string();
        let client = Mariadb::client(root);
        format!(
            "set -e\n\
             mariadbd --no-defaults --skip-networking --datadir={data} --socket={socket} \
               --pid-file={pid} --log-error={log} --tmpdir={tmp} {options} &\n\
             server=$!\n\
             trap 'status=$?; set +e; kill -KILL $server 2>/dev/null; exit $status' EXIT\n\
             mariadb-admin {client} --wait=240 --connect-timeout=60 ping >/dev/null \
               || {{ tail -n 40 {log} >&2; exit 1; }}\n\
             {body}\n\
             mariadb-admin {client} shutdown\n\
             wait $server\n",
            data = at("data"),
            socket = at("socket"),
            pid = at("server.pid"),
            log = at("server.log"),
            tmp = dir.display(),
        )
    }

    fn client(root: &Path) -> String {
        format!(
            "--no-defaults -u root --socket={}",
            root.join("db/socket").display()
        )
    }
}

impl Engine for Mariadb {
    fn name(&self) -> &'static str {
        "mariadb"
    }

    fn user(&self) -> &'static str {
        "mysql"
    }

    fn prepare(&self, fs: &LoopFs) {
        assert!(
            Path::new("/usr/sbin/mariadbd").is_file(),
            "mariadbd is not installed: scripts/setup-test-deps installs mariadb-server"
        );
        let dir = fs.join("db");
        fs::create_dir(&dir).expect("create a folder");
        let status = Command::new("chown")
            .arg("mysql:")
            .arg(&dir)
            .status()
            .expect("run chown");
        assert!(status.success());
        as_user(
            "mysql",
            None,
            &format!(
                "mariadb-install-db --no-defaults --skip-test-db --auth-root-authentication-method=normal \
                   --datadir={dir}/data --tmpdir={dir} >/dev/null && sync -f {dir}",
                dir = dir.display()
            ),
        );
    }

    fn sql(&self, table: &str, marker: &str) -> String {
        format!(
            "CREATE DATABASE IF NOT EXISTS d; USE d; {ANSI}\n{}",
            load_sql(table, marker)
        )
    }

    fn load(&self, root: &Path, sql: &Path) -> String {
        let durable = "--innodb-flush-log-at-trx-commit=1 --sync-binlog=1";
        let body = format!(
            "mariadb {} -e 'source {}'",
            Mariadb::client(root),
            sql.display()
        );
        Mariadb::around(root, durable, &body)
    }

    fn read(&self, root: &Path, queries: &[String]) -> String {
        let client = Mariadb::client(root);
        let body: Vec<String> = queries
            .iter()
            .map(|query| format!("mariadb {client} -N -B -D d -e \"{ANSI} {query}\"; echo @@"))
            .collect();
        Mariadb::around(root, "", &body.join("\n"))
    }
}

#[test]
fn mariadb_keeps_every_row_read_cold_and_after_a_cut_with_sync_at_exit() {
    cold_check(&Mariadb, 256);
}
