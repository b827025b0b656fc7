//! Database servers started, loaded and stopped inside the command, on a
//! file system of the test's own: with `--sync-at-exit` the row is on the
//! device when the command returns; without it (the control), not yet.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Outcome, command, library, mariadb, tmpdir_of};
use crate::loopfs::LoopFs;

/// Runs `sh -c script` as `user`, under `eatmydata` with `options`.
fn as_user(user: &str, options: &[&str], script: &str) -> Outcome {
    library();
    let (_tmp, tmpdir) = tmpdir_of(user);
    let output = Command::new("runuser")
        .args(["-u", user, "--"])
        .arg(command())
        .args(options)
        .args(["sh", "-c", script])
        .env_remove("LD_PRELOAD")
        .env("TMPDIR", tmpdir)
        .output()
        .expect("run runuser");
    let outcome = Outcome {
        output,
        calls: Vec::new(),
    };
    assert!(
        outcome.output.status.success(),
        "{script}: {:?}\n{}",
        outcome.output.status,
        outcome.stderr()
    );
    outcome
}

/// A folder on `fs` that `user` owns.
fn folder_for(fs: &LoopFs, name: &str, user: &str) -> PathBuf {
    let path = fs.join(name);
    std::fs::create_dir(&path).expect("create a folder");
    let status = Command::new("chown")
        .arg(format!("{user}:"))
        .arg(&path)
        .status()
        .expect("run chown");
    assert!(status.success());
    path
}

/// Makes what a set-up wrote durable, so that the runs alone are judged.
fn settle(fs: &LoopFs) {
    let status = Command::new("sync")
        .arg("-f")
        .arg(fs.path())
        .status()
        .expect("run sync");
    assert!(status.success());
}

/// The control run, then the run with `--sync-at-exit`, of `script(marker)`
/// as `user`; the second says what it flushed.
fn control_then_synced(fs: &LoopFs, user: &str, engine: &str, script: impl Fn(&str) -> String) {
    let run = super::control_then_synced(fs, engine, |synced, marker| {
        as_user(user, &super::options(synced, &["-v"]), &script(marker))
    });
    let said = format!("flushed 1 file system ({}) in ", fs.path().display());
    assert!(run.stderr().contains(&said), "{}", run.stderr());
}

fn postgres_bin() -> PathBuf {
    std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is installed (package postgresql)")
        .filter_map(|entry| entry.ok().map(|e| e.path().join("bin")))
        .filter(|bin| bin.join("postgres").is_file())
        .max()
        .expect("a PostgreSQL version with a bin folder")
}

#[test]
fn postgresql_stopped_inside_the_command_is_on_the_device() {
    let fs = LoopFs::new("atexit-pg", 160);
    let bin = postgres_bin();
    let data = folder_for(&fs, "data", "postgres");
    let socket = folder_for(&fs, "socket", "postgres");
    let tool = |name: &str| bin.join(name).display().to_string();
    let (data, socket) = (data.display().to_string(), socket.display().to_string());
    let init = Command::new("runuser")
        .args(["-u", "postgres", "--", &tool("initdb")])
        .args([
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-instructions",
            "--no-sync",
        ])
        .args(["-D", &data])
        .output()
        .expect("run initdb");
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    settle(&fs);
    let log = fs.join("server.log").display().to_string();
    let script = |marker: &str| {
        format!(
            "{pg_ctl} -w -D {data} -l {log} -o '-k {socket} -c listen_addresses=' start >/dev/null && \
             {psql} -X -q -v ON_ERROR_STOP=1 -h {socket} -d postgres \
               -c 'CREATE TABLE IF NOT EXISTS t (v text)' -c \"INSERT INTO t VALUES ('{marker}')\" && \
             {pg_ctl} -w -D {data} -m fast stop >/dev/null",
            pg_ctl = tool("pg_ctl"),
            psql = tool("psql"),
        )
    };
    let touch = Command::new("runuser")
        .args(["-u", "postgres", "--", "touch", &log])
        .status()
        .expect("run touch");
    assert!(touch.success());
    control_then_synced(&fs, "postgres", "postgresql", script);
}

#[test]
fn mariadb_stopped_inside_the_command_is_on_the_device() {
    let fs = LoopFs::new("atexit-mariadb", 256);
    let dir = fs.join("db");
    mariadb::install(&dir);
    settle(&fs);
    let client = mariadb::client(&dir);
    let script = |marker: &str| {
        let body = format!(
            "mariadb {client} -e \"CREATE DATABASE IF NOT EXISTS d; \
               CREATE TABLE IF NOT EXISTS d.t (v text) ENGINE=InnoDB; INSERT INTO d.t VALUES ('{marker}')\""
        );
        mariadb::around(&dir, "", "", &body)
    };
    control_then_synced(&fs, "mysql", "mariadb", script);
}

/// `systemd-analyze verify` on `unit`, with `drop_in` installed as
/// `UNIT.d/NAME` in a unit folder of the test's own: its stderr.
fn verify_with_drop_in(unit: &str, name: &str, drop_in: &str) -> String {
    let units = crate::common::TempDir::new("atexit-units");
    let folder = units.join(format!("{unit}.d"));
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join(name), drop_in).unwrap();
    // The trailing colon keeps the system's own unit folders after ours.
    let output = Command::new("systemd-analyze")
        .args(["verify", unit])
        .env("SYSTEMD_UNIT_PATH", format!("{}:", units.path().display()))
        .output()
        .expect("run systemd-analyze (package systemd)");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    stderr
}

#[test]
fn the_systemd_drop_in_verifies_for_the_installed_servers() {
    let drop_in = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/systemd/eatmydata.conf"),
    )
    .expect("read contrib/systemd/eatmydata.conf");
    assert!(drop_in.contains("\nEnvironment=LD_PRELOAD="), "{drop_in}");
    for unit in ["mariadb.service", "postgresql@.service"] {
        let said = verify_with_drop_in(unit, "eatmydata.conf", &drop_in);
        assert!(!said.contains("eatmydata.conf"), "{unit}: {said}");
        // The control: the same folder with a misspelt key is read, and said.
        let misspelt = drop_in.replace("Environment=", "Environmnt=");
        let said = verify_with_drop_in(unit, "eatmydata.conf", &misspelt);
        assert!(
            said.contains("eatmydata.conf") && said.contains("Unknown key"),
            "{unit}: {said}"
        );
    }
}
