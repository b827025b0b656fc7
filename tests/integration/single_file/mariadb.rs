//! As root, `eatmydata mariadbd --user=mysql` with only the single file
//! installed: the server, which drops to the mysql user, runs with the
//! library the command wrote out, and its commits reach the disk without a
//! flush (the loop device's counter, beside a control run without it).

use std::fs;
use std::path::Path;
use std::process::Command;

use super::lonely;
use crate::common::TempDir;
use crate::loopfs::LoopFs;

/// Autocommit INSERTs, each flushed by InnoDB's log at commit.
const COMMITS: u64 = 200;

#[test]
fn mariadbd_as_mysql_runs_with_the_carried_library() {
    assert!(
        Path::new("/usr/sbin/mariadbd").is_file(),
        "mariadbd is not installed: scripts/setup-test-deps installs mariadb-server"
    );
    let dir = TempDir::new("single-file-mariadb");
    let eatmydata = lonely(&dir);
    let disk = LoopFs::new("single-file-mariadb", 256);
    let db = disk.join("db");
    fs::create_dir(&db).unwrap();
    let owned = Command::new("chown").arg("mysql:").arg(&db).status();
    assert!(owned.unwrap().success());
    let installed = Command::new("runuser")
        .args(["-u", "mysql", "--", "mariadb-install-db", "--no-defaults"])
        .args(["--skip-test-db", "--auth-root-authentication-method=normal"])
        .arg(format!("--datadir={}", db.join("data").display()))
        .arg(format!("--tmpdir={}", db.display()))
        .output()
        .unwrap();
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    let mut sql = String::from(
        "CREATE DATABASE IF NOT EXISTS d;\nCREATE TABLE IF NOT EXISTS d.t (x INT) ENGINE=InnoDB;\n",
    );
    for n in 0..COMMITS {
        sql.push_str(&format!("INSERT INTO d.t VALUES ({n});\n"));
    }
    fs::write(dir.join("load.sql"), sql).unwrap();

    let mut stderr = String::new();
    let control = disk.flushes_during(|| stderr = serve(&db, &dir.join("load.sql"), None));
    let eaten = disk.flushes_during(|| {
        stderr = serve(&db, &dir.join("load.sql"), Some(&eatmydata));
    });
    assert!(control >= COMMITS, "control: {control} flushes");
    assert_eq!(eaten, 0, "flushes under eatmydata ({control} without)");
    assert!(
        stderr.contains("mariadbd with /tmp/eatmydata-0/libeatmydata-")
            && stderr.contains("(the copy embedded in eatmydata"),
        "{stderr}"
    );
    let count = serve_query(&db, "SELECT COUNT(*) FROM d.t");
    assert_eq!(count.trim(), (2 * COMMITS).to_string());
}

/// As root: `[eatmydata -v] mariadbd --user=mysql` on the data in `db`,
/// `sql` loaded through the client, a clean shutdown (the server killed by
/// its pid if anything failed on the way). Returns stderr.
fn serve(db: &Path, sql: &Path, eatmydata: Option<&Path>) -> String {
    let prefix = eatmydata.map_or(String::new(), |e| format!("'{}' -v ", e.display()));
    let body = format!("mariadb {} -e 'source {}'", client(db), sql.display());
    run_script(&around(db, &prefix, &body))
}

/// The rows `query` gives, from a server started without eatmydata.
fn serve_query(db: &Path, query: &str) -> String {
    let body = format!("mariadb {} -N -B -e '{query}'", client(db));
    let script = around(db, "", &body);
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

fn client(db: &Path) -> String {
    format!(
        "--no-defaults -u root --socket={}",
        db.join("socket").display()
    )
}

/// The server started as root and dropping to mysql, `body`, a clean
/// shutdown; the server killed by its pid if anything failed.
fn around(db: &Path, prefix: &str, body: &str) -> String {
    let at = |name: &str| db.join(name).display().to_string();
    let client = client(db);
    format!(
        "set -e\n\
         {prefix}mariadbd --no-defaults --user=mysql --skip-networking --datadir={data} \
           --socket={socket} --pid-file={pid} --log-error={log} --tmpdir={tmp} \
           --innodb-flush-log-at-trx-commit=1 --sync-binlog=1 &\n\
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
        tmp = db.display(),
    )
}
