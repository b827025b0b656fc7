//! Nothing is lost on a clean shutdown: a database loaded under the library
//! and shut down cleanly holds every row when read cold, from the device,
//! without the library; with `--sync-at-exit`, the device holds it all as
//! soon as the command returns.
//!
//! Each engine's data lives on a file system of the test's own (`LoopFs`).
//! The check, the same for SQLite, PostgreSQL and MariaDB:
//!
//! 1. The load, under `eatmydata --report`, with the server started and
//!    stopped cleanly inside the command. The report shows syncs skipped.
//!    The oracle can fail: right then, a marker row written last is not
//!    yet in the backing file (nothing asked for it; writeback waits 30 s),
//!    and a copy of that file taken then (a power cut) reads back without
//!    the load.
//! 2. Unmount, detach the loop device, attach it again, mount, and read
//!    back without the library: every row, as the model says, and the
//!    marker.
//! 3. A second load under `eatmydata --sync-at-exit`: its marker is in the
//!    backing file when the command returns, and a copy of that file taken
//!    then (a power cut) holds every row of both loads.
//!
//! The expected rows and their checksum come from the same model that
//! wrote the SQL, not from the database.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Run, TempDir, command, library, quiet_disks, tmpdir_of};
use crate::loopfs::LoopFs;
use crate::sync_at_exit::marker;

mod mariadb; // a server started as the mysql user, on a private socket
mod postgres; // a cluster run as the postgres user, on a private socket
mod sqlite; // the sqlite3 shell, which writes the file itself

const ROWS: u32 = 3000;
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

/// The load of `table`: one transaction per batch, so one commit (and
/// sync) per batch; then `marker`, last, in table `m`.
fn load_sql(table: &str, marker: &str) -> String {
    let mut sql = format!("CREATE TABLE {table} (id integer PRIMARY KEY, v text NOT NULL);\n");
    for first in (1..=ROWS).step_by(BATCH as usize) {
        sql.push_str(&format!("BEGIN;\nINSERT INTO {table} VALUES "));
        let last = (first + BATCH - 1).min(ROWS);
        let values: Vec<String> = (first..=last)
            .map(|id| format!("({id}, '{}')", value(id)))
            .collect();
        sql.push_str(&values.join(", "));
        sql.push_str(";\nCOMMIT;\n");
    }
    sql.push_str(&format!(
        "UPDATE {table} SET v = v || ' updated' WHERE id % 10 = 0;\n\
         DELETE FROM {table} WHERE id % 13 = 0;\n\
         CREATE TABLE IF NOT EXISTS m (v text NOT NULL);\n\
         INSERT INTO m VALUES ('{marker}');\n"
    ));
    sql
}

/// What every engine is asked for when checking: one `id|v` line per row.
fn read_back(table: &str) -> String {
    format!("SELECT id || '|' || v FROM {table} ORDER BY id")
}

/// The markers, one a line.
const MARKERS: &str = "SELECT v FROM m ORDER BY v";

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
fn assert_rows(what: &str, read_back: &str) {
    let got: Vec<&str> = read_back.lines().collect();
    let want = expected_rows();
    let first_wrong = got.iter().zip(&want).position(|(g, w)| g != w);
    assert!(
        got.len() == want.len() && checksum(&got) == checksum(&want),
        "{what}: {} rows read back, {} expected; checksum {:x} vs {:x}; first difference at row index {first_wrong:?}",
        got.len(),
        want.len(),
        checksum(&got),
        checksum(&want)
    );
}

/// What an engine needs for the check, given the root of the file system
/// its data is on (the original, or the copy after a cut).
trait Engine {
    /// Its name in messages.
    fn name(&self) -> &'static str;
    /// The user it runs as.
    fn user(&self) -> &'static str;
    /// Makes an empty database on `fs`, durable before anything is judged.
    fn prepare(&self, fs: &LoopFs);
    /// `load_sql` in the engine's dialect.
    fn sql(&self, table: &str, marker: &str) -> String {
        load_sql(table, marker)
    }
    /// A shell script that starts the server (if any), runs the SQL file
    /// `sql`, and shuts the server down cleanly.
    fn load(&self, root: &Path, sql: &Path) -> String;
    /// A shell script that starts the server, prints each query's rows
    /// followed by a line `@@`, and shuts it down cleanly.
    fn read(&self, root: &Path, queries: &[String]) -> String;
}

/// Runs `sh -c script` as `user`, under `eatmydata options` when given.
fn as_user(user: &str, eatmydata: Option<&[&str]>, script: &str) -> String {
    let (_tmp, tmpdir) = tmpdir_of(user);
    let mut run = Command::new("runuser");
    run.args(["-u", user, "--"]);
    if let Some(options) = eatmydata {
        run.arg(command()).args(options);
    }
    let output = run
        .args(["sh", "-c", script])
        .env_remove("LD_PRELOAD")
        .env("TMPDIR", tmpdir)
        .output()
        .expect("run runuser");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "{script}: {:?}\n{}{stderr}",
        output.status,
        String::from_utf8_lossy(&output.stdout)
    );
    stderr
}

/// The syncs `eatmydata --report` says were skipped, over all processes.
fn skipped(report: &str) -> u64 {
    let all = report
        .lines()
        .find(|line| line.trim_start().starts_with("all "))
        .unwrap_or_else(|| panic!("no `all` line in the report:\n{report}"));
    // all PROCESSES FSYNC SYNC RANGE MSYNC O_SYNC RWF O_DIRECT
    let counts = all.split_whitespace().skip(2);
    counts
        .filter_map(|n| n.replace(',', "").parse::<u64>().ok())
        .sum()
}

/// Writes the load of `table` for `engine` in `dir`, readable by its user
/// and off the file system judged, whose device must not hold the marker
/// but in the database.
fn write_load(engine: &dyn Engine, dir: &TempDir, table: &str, marker: &str) -> PathBuf {
    let file = dir.join(format!("{table}.sql"));
    fs::write(&file, engine.sql(table, marker)).expect("write the load");
    fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).expect("let the server read it");
    file
}

/// The rows of each query, read from the file system at `root` without the
/// library; the script's output when it fails.
fn try_read(engine: &dyn Engine, root: &Path, queries: &[String]) -> Result<Vec<String>, String> {
    let out = Command::new("runuser")
        .args(["-u", engine.user(), "--", "sh", "-c"])
        .arg(engine.read(root, queries))
        .env_remove("LD_PRELOAD")
        .output()
        .expect("run runuser");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!("{:?}\n{stdout}{stderr}", out.status));
    }
    let parts: Vec<String> = stdout
        .split("@@\n")
        .map(str::to_owned)
        .take(queries.len())
        .collect();
    assert_eq!(parts.len(), queries.len(), "{stdout}");
    Ok(parts)
}

/// [`try_read`], which must succeed.
fn read(engine: &dyn Engine, root: &Path, queries: &[String]) -> Vec<String> {
    try_read(engine, root, queries)
        .unwrap_or_else(|failed| panic!("{} read: {failed}", engine.name()))
}

/// Step 1 of the module's doc on a new file system of `megabytes`: the
/// file system and the marker, or what was dirty on the machine when the
/// marker was on the device already (the kernel writes back early when the
/// machine as a whole has much dirty data: the control could not fail).
fn load_and_show_a_cut_loses_it(
    engine: &dyn Engine,
    megabytes: u32,
    loads: &TempDir,
) -> Result<(LoopFs, String), String> {
    let name = engine.name();
    let fs = LoopFs::new(&format!("durability-{name}"), megabytes);
    engine.prepare(&fs);
    let first = marker(&format!("{name}-cold"));
    let sql = write_load(engine, loads, "t", &first);
    // No test's sync(2) may write the marker out meanwhile.
    let _quiet = quiet_disks();
    let report = as_user(
        engine.user(),
        Some(&["--report"]),
        &engine.load(fs.path(), &sql),
    );
    assert!(
        skipped(&report) > 0,
        "{name}: the library skipped nothing:\n{report}"
    );
    if fs.holds(&first) {
        let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let dirty = meminfo
            .lines()
            .filter(|l| l.starts_with("Dirty") || l.starts_with("Writeback:"));
        return Err(dirty.collect::<Vec<_>>().join(", "));
    }
    // The control: a power cut now, in place of the clean unmount, loses
    // the load, and the read below says so.
    let early = fs.cut(&format!("durability-{name}-early"));
    let lost = try_read(engine, early.path(), &[read_back("t")]);
    let want = expected_rows();
    assert!(
        lost.as_ref()
            .map_or(true, |rows| checksum(&rows[0].lines().collect::<Vec<_>>())
                != checksum(&want)),
        "{name}: a cut right after the load kept every row: the oracle cannot fail"
    );
    Ok((fs, first))
}

/// The three steps of the module's doc, for `engine`, on a file system of
/// `megabytes`. Step 1 is tried up to three times, each on a new file
/// system, while its marker is on the device already.
fn cold_check(engine: &dyn Engine, megabytes: u32) {
    library();
    let name = engine.name();
    let loads = TempDir::new(&format!("durability-{name}-sql"));
    let mut early = Vec::new();
    let (mut fs, first) = loop {
        match load_and_show_a_cut_loses_it(engine, megabytes, &loads) {
            Ok(done) => break done,
            Err(dirty) if early.len() < 2 => early.push(dirty),
            Err(dirty) => panic!(
                "{name}: the marker reached the device with no sync, 3 times ({early:?}, {dirty}): \
                 the oracle could not fail"
            ),
        }
    };

    // 2. Read cold, without the library.
    fs.remount_cold();
    let queries = [read_back("t"), MARKERS.to_owned()];
    let got = read(engine, fs.path(), &queries);
    assert_rows(&format!("{name}, read cold"), &got[0]);
    assert_eq!(
        got[1],
        format!("{first}\n"),
        "{name}: the marker, read cold"
    );

    // 3. With --sync-at-exit, on the device when the command returns.
    let second = marker(&format!("{name}-synced"));
    let sql = write_load(engine, &loads, "t2", &second);
    let options = ["--report", "--sync-at-exit"];
    let report = as_user(engine.user(), Some(&options), &engine.load(fs.path(), &sql));
    assert!(
        skipped(&report) > 0,
        "{name}: the library skipped nothing:\n{report}"
    );
    assert!(
        fs.holds(&second),
        "{name}: --sync-at-exit returned before the data was on the device"
    );
    let cut = fs.cut(&format!("durability-{name}-cut"));
    let queries = [read_back("t"), read_back("t2"), MARKERS.to_owned()];
    let got = read(engine, cut.path(), &queries);
    assert_rows(&format!("{name}, t after a cut"), &got[0]);
    assert_rows(&format!("{name}, t2 after a cut"), &got[1]);
    let mut markers = [first, second];
    markers.sort();
    assert_eq!(
        got[2],
        format!("{}\n{}\n", markers[0], markers[1]),
        "{name}: the markers after a cut"
    );
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
