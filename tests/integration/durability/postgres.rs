//! PostgreSQL: a cluster made on the test's file system, loaded with fsync
//! and synchronous_commit on by a server started under the library, stopped
//! cleanly; then read cold, and after a cut with `--sync-at-exit`.

use super::*;

struct Postgres {
    bin: PathBuf,
}

impl Postgres {
    fn new() -> Postgres {
        let bin = fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL is installed (package postgresql)")
            .filter_map(|entry| entry.ok().map(|e| e.path().join("bin")))
            .filter(|bin| bin.join("postgres").is_file())
            .max()
            .expect("a PostgreSQL version with a bin folder");
        Postgres { bin }
    }

    fn tool(&self, name: &str) -> String {
        self.bin.join(name).display().to_string()
    }

    /// `start` with `options`, then `body`, then a clean stop; the server
    /// killed at once if anything failed on the way.
    fn around(&self, root: &Path, options: &str, body: &str) -> String {
        let pg_ctl = self.tool("pg_ctl");
        let data = root.join("data");
        let data = data.display();
        let socket = root.join("socket");
        let socket = socket.display();
        format!(
            "set -e\n\
             trap 'status=$?; set +e; {pg_ctl} -D {data} -m immediate stop >/dev/null 2>&1; exit $status' EXIT\n\
             {pg_ctl} -w -D {data} -l {data}/server.log \
               -o '-k {socket} -c listen_addresses= {options}' start >/dev/null\n\
             {body}\n\
             {pg_ctl} -w -D {data} -m fast stop >/dev/null\n"
        )
    }

    fn psql(&self, root: &Path) -> String {
        format!(
            "{} -X -q -At -v ON_ERROR_STOP=1 -h {} -d postgres",
            self.tool("psql"),
            root.join("socket").display()
        )
    }
}

impl Engine for Postgres {
    fn name(&self) -> &'static str {
        "pg"
    }

    fn user(&self) -> &'static str {
        "postgres"
    }

    fn prepare(&self, fs: &LoopFs) {
        for folder in ["data", "socket"] {
            fs::create_dir(fs.join(folder)).expect("create a folder");
            let status = Command::new("chown")
                .arg("postgres:")
                .arg(fs.join(folder))
                .status()
                .expect("run chown");
            assert!(status.success());
        }
        let data = fs.join("data").display().to_string();
        as_user(
            "postgres",
            None,
            &format!(
                "{} -A trust -U postgres --no-instructions --no-sync -D {data} >/dev/null && sync -f {data}",
                self.tool("initdb")
            ),
        );
    }

    fn load(&self, root: &Path, sql: &Path) -> String {
        let durable = "-c fsync=on -c synchronous_commit=on -c wal_sync_method=fdatasync";
        let body = format!("{} -f {}", self.psql(root), sql.display());
        self.around(root, durable, &body)
    }

    fn read(&self, root: &Path, queries: &[String]) -> String {
        let psql = self.psql(root);
        let body: Vec<String> = queries
            .iter()
            .map(|query| format!("{psql} -c \"{query}\"; echo @@"))
            .collect();
        self.around(root, "", &body.join("\n"))
    }
}

#[test]
fn postgresql_keeps_every_row_read_cold_and_after_a_cut_with_sync_at_exit() {
    cold_check(&Postgres::new(), 160);
}
