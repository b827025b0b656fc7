//! PostgreSQL: initdb, a server started under the library, a load with
//! fsync and synchronous_commit on, a clean stop, then a restart without
//! the library and every row read back.

use super::*;

/// A PostgreSQL cluster in a private folder, on a unix socket only, run as
/// the `postgres` user; stopped when dropped, whatever happened.
struct Postgres {
    dir: ServerDir,
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
        let pg = Postgres {
            dir: ServerDir::new("durability-pg", "postgres"),
            bin,
        };
        fs::create_dir(pg.socket_dir()).expect("create the socket folder");
        let status = Command::new("chown")
            .arg("postgres:")
            .arg(pg.socket_dir())
            .status()
            .expect("run chown");
        assert!(status.success());
        pg.as_postgres(
            false,
            "initdb",
            &["-A", "trust", "-U", "postgres", "--no-instructions", "-D"],
            &[&pg.data()],
        );
        pg
    }

    fn data(&self) -> String {
        self.dir.0.join("data").display().to_string()
    }

    fn socket_dir(&self) -> PathBuf {
        self.dir.0.join("socket")
    }

    /// Runs a PostgreSQL program as `postgres`, under the `eatmydata` command
    /// when `eat` is set, and returns its stdout.
    fn as_postgres(&self, eat: bool, program: &str, args: &[&str], more: &[&str]) -> String {
        let mut run = Command::new("runuser");
        run.args(["-u", "postgres", "--"]);
        if eat {
            run.arg(command());
        }
        run.arg(self.bin.join(program))
            .args(args)
            .args(more)
            .env_remove("LD_PRELOAD");
        let output = run.output().expect("run runuser");
        assert!(
            output.status.success(),
            "{program} {args:?}: {:?}\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("text output")
    }

    fn start(&self, eat: bool) {
        let options = format!("-k {} -c listen_addresses=", self.socket_dir().display());
        let log = self.dir.0.join("server.log").display().to_string();
        self.as_postgres(
            eat,
            "pg_ctl",
            &["-w", "-l", &log, "-o", &options, "-D"],
            &[&self.data(), "start"],
        );
    }

    /// A clean shutdown: a checkpoint, every file closed.
    fn stop(&self) {
        self.as_postgres(
            false,
            "pg_ctl",
            &["-w", "-m", "fast", "-D"],
            &[&self.data(), "stop"],
        );
    }

    fn psql(&self, args: &[&str]) -> String {
        let socket = self.socket_dir().display().to_string();
        self.as_postgres(
            false,
            "psql",
            &[
                "-X",
                "-q",
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                &socket,
                "-d",
                "postgres",
            ],
            args,
        )
    }

    /// The server processes: the postmaster and its children.
    fn processes(&self) -> Vec<u32> {
        let pid_file = fs::read_to_string(self.dir.0.join("data/postmaster.pid"))
            .expect("the server is running");
        let postmaster: u32 = pid_file
            .lines()
            .next()
            .and_then(|l| l.parse().ok())
            .expect("a pid");
        let children = fs::read_to_string(format!("/proc/{postmaster}/task/{postmaster}/children"))
            .unwrap_or_default();
        let mut pids = vec![postmaster];
        pids.extend(
            children
                .split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
        pids
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if self.dir.0.join("data/postmaster.pid").exists() {
            let _ = Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(self.bin.join("pg_ctl"))
                .args(["-w", "-m", "immediate", "-D", &self.data(), "stop"])
                .output();
        }
    }
}

#[test]
fn postgresql_keeps_every_row_loaded_under_the_library() {
    library();
    let pg = Postgres::new();
    let sql = pg.dir.0.join("load.sql");
    fs::write(&sql, load_sql()).expect("write the load");
    fs::set_permissions(&sql, fs::Permissions::from_mode(0o644)).expect("let postgres read it");

    pg.start(true);
    let pids = pg.processes();
    let mapped = mapping_the_library(&pids);
    assert!(
        mapped.len() >= 4,
        "a postmaster and its helpers: {mapped:?}"
    );
    assert!(
        mapped.iter().all(|(_, has)| *has),
        "every server process maps the library: {mapped:?}"
    );
    pg.psql(&[
        "-c",
        "SET synchronous_commit = on",
        "-f",
        &sql.display().to_string(),
    ]);
    let mut settings = String::new();
    for name in ["fsync", "synchronous_commit", "wal_sync_method"] {
        let _ = write!(
            settings,
            "{} ",
            pg.psql(&["-c", &format!("SHOW {name}")]).trim()
        );
    }
    assert!(
        settings.starts_with("on on "),
        "the server asks for durability: {settings}"
    );
    pg.psql(&["-c", "CHECKPOINT"]);
    pg.stop();

    pg.start(false);
    let mapped = mapping_the_library(&pg.processes());
    assert!(
        !mapped.is_empty() && mapped.iter().all(|(_, has)| !*has),
        "the control start has no library: {mapped:?}"
    );
    assert_rows("postgresql", &pg.psql(&["-c", READ_BACK]));
    let amcheck = pg.psql(&[
        "-c",
        "SELECT count(*) FROM t WHERE v NOT LIKE 'row ' || id || ' %'",
    ]);
    assert_eq!(amcheck.trim(), "0");
    pg.stop();
}
