//! MariaDB: a fresh data folder, a server started under the library, the
//! classic single-row autocommit import, a clean shutdown, then a restart
//! without the library and every row read back.

use super::*;

/// A MariaDB server in a private folder, on a unix socket only, run as the
/// `mysql` user; killed when dropped if a clean shutdown did not happen.
struct Mariadb {
    dir: ServerDir,
    server: Option<std::process::Child>,
}

impl Mariadb {
    fn new() -> Mariadb {
        let db = Mariadb {
            dir: ServerDir::new("durability-mariadb", "mysql"),
            server: None,
        };
        let datadir = format!("--datadir={}", db.dir.0.join("data").display());
        let install = Command::new("runuser")
            .args([
                "-u",
                "mysql",
                "--",
                "mariadb-install-db",
                "--no-defaults",
                "--skip-test-db",
            ])
            .args(["--auth-root-authentication-method=normal", &datadir])
            .output()
            .expect("run mariadb-install-db (package mariadb-server)");
        assert!(
            install.status.success(),
            "{}",
            String::from_utf8_lossy(&install.stderr)
        );
        db
    }

    fn socket(&self) -> String {
        self.dir.0.join("socket").display().to_string()
    }

    fn start(&mut self, eat: bool) {
        let mut run = Command::new("runuser");
        run.args(["-u", "mysql", "--"]);
        if eat {
            run.arg(command());
        }
        let dir = &self.dir.0;
        run.args([
            "mariadbd",
            "--no-defaults",
            "--skip-networking",
            "--innodb-flush-log-at-trx-commit=1",
        ]);
        run.arg(format!("--datadir={}", dir.join("data").display()));
        run.arg(format!("--socket={}", self.socket()));
        run.arg(format!("--pid-file={}", dir.join("server.pid").display()));
        run.arg(format!("--log-error={}", dir.join("server.log").display()));
        self.server = Some(
            run.env_remove("LD_PRELOAD")
                .spawn()
                .expect("start mariadbd"),
        );
        // mariadb-admin --wait retries the connection until the server answers.
        self.client(
            "mariadb-admin",
            &["--wait=60", "--connect-timeout=60", "ping"],
        );
    }

    fn pid(&self) -> u32 {
        let text =
            fs::read_to_string(self.dir.0.join("server.pid")).expect("the server wrote its pid");
        text.trim().parse().expect("a pid")
    }

    /// A clean shutdown, waited for.
    fn stop(&mut self) {
        self.client("mariadb-admin", &["shutdown"]);
        let status = self
            .server
            .take()
            .expect("a running server")
            .wait()
            .expect("wait for mariadbd");
        assert!(status.success(), "mariadbd exited {status:?}");
    }

    fn client(&self, program: &str, args: &[&str]) -> String {
        let socket = format!("--socket={}", self.socket());
        let output = Command::new(program)
            .args(["--no-defaults", "-u", "root", &socket])
            .args(args)
            .env_remove("LD_PRELOAD")
            .output()
            .unwrap_or_else(|e| panic!("run {program}: {e}"));
        assert!(
            output.status.success(),
            "{program} {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("text output")
    }
}

impl Drop for Mariadb {
    fn drop(&mut self) {
        if let Some(mut server) = self.server.take() {
            if let Ok(text) = fs::read_to_string(self.dir.0.join("server.pid")) {
                let _ = Command::new("kill").args(["-KILL", text.trim()]).status();
            }
            let _ = server.kill();
            let _ = server.wait();
        }
    }
}

#[test]
fn mariadb_keeps_every_row_loaded_under_the_library() {
    assert!(
        Path::new("/usr/sbin/mariadbd").is_file(),
        "mariadbd is not installed: scripts/setup-test-deps installs mariadb-server"
    );
    library();
    let mut db = Mariadb::new();
    let ansi = "SET SESSION sql_mode = 'PIPES_AS_CONCAT';";
    db.start(true);
    let mapped = mapping_the_library(&[db.pid()]);
    assert_eq!(mapped, vec![(db.pid(), true)], "mariadbd maps the library");
    let load = db.dir.0.join("load.sql");
    fs::write(
        &load,
        format!("CREATE DATABASE d; USE d; {ansi}\n{}", load_sql()),
    )
    .expect("write the load");
    db.client("mariadb", &["-e", &format!("source {}", load.display())]);
    let durable = db.client(
        "mariadb",
        &[
            "-N",
            "-B",
            "-e",
            "SELECT @@innodb_flush_log_at_trx_commit, @@sync_binlog",
        ],
    );
    assert!(
        durable.starts_with("1\t"),
        "InnoDB flushes its log at each commit: {durable}"
    );
    db.stop();

    db.start(false);
    let mapped = mapping_the_library(&[db.pid()]);
    assert_eq!(
        mapped,
        vec![(db.pid(), false)],
        "the control start has no library"
    );
    let rows = db.client(
        "mariadb",
        &["-N", "-B", "-D", "d", "-e", &format!("{ansi} {READ_BACK}")],
    );
    assert_rows("mariadb", &rows);
    db.client("mariadb", &["-N", "-B", "-D", "d", "-e", "CHECK TABLE t"]);
    db.stop();
}
