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
