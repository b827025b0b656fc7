//! The account of what the runtime saved: a dockerd of the test's own
//! with the runtime registered, whose runtime keeps an account of the
//! test's own (`EATMYDATA_HOME` in the daemon's environment, which its
//! containerd, their shims and the runtime inherit: the account and the
//! containers' report folders live under it), and a tiny image made
//! from this machine's files (the sync probe, a garbage writer and the
//! libraries they need). The account is read as a user reads it:
//! `eatmydata-runtime report --json`.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::daemon::{Dockerd, RunDir};
use super::engine::{register, runtime};
use crate::common::{TempDir, probe};
use crate::loopfs::LoopFs;

/// Where the library puts the report file inside every container.
pub const REPORT: &str = "/dev/.eatmydata/report";

/// A dockerd with the runtime registered as `eatmydata`, its own account,
/// and the tiny image loaded as [`IMAGE`].
pub struct Accounted {
    // Dropped first: the daemon, then its folder (and what is mounted there).
    dockerd: Dockerd,
    pub account: PathBuf,
    dir: RunDir,
}

/// The tiny image's name.
pub const IMAGE: &str = "eatmydata-test/account:latest";

impl Accounted {
    /// With the runtime registered in its daemon.json, as `eatmydata`.
    pub fn start(label: &str) -> Accounted {
        Accounted::start_unregistered(label, true)
    }

    /// With the runtime registered or not.
    pub fn start_unregistered(label: &str, registered: bool) -> Accounted {
        Accounted::start_with(label, registered, Command::new("dockerd"))
    }

    /// Unregistered, in a network namespace of its own (`unshare --net`,
    /// which then runs dockerd as the same process): the networks it
    /// makes (a job's bridge, its published ports) are there, not on the
    /// machine's.
    pub fn start_isolated(label: &str) -> Accounted {
        Accounted::start_with(label, false, Accounted::isolated())
    }

    /// The same, with the runtime registered as `eatmydata`.
    pub fn start_isolated_registered(label: &str) -> Accounted {
        Accounted::start_with(label, true, Accounted::isolated())
    }

    fn isolated() -> Command {
        let mut unshare = Command::new("unshare");
        unshare.args(["--net", "dockerd"]);
        unshare
    }

    fn start_with(label: &str, registered: bool, mut command: Command) -> Accounted {
        let dir = RunDir::new(label);
        let config = dir.join("daemon.json");
        fs::write(&config, "{}\n").unwrap();
        if registered {
            register("docker", &config);
        }
        // Root's home for the runtime: the account and the containers'
        // folders, never the machine's own.
        let account = dir.join("home");
        command.env("EATMYDATA_HOME", &account);
        let dockerd = Dockerd::start_with(
            command,
            dir.path(),
            &config,
            &dir.join("data"),
            &dir.join("exec"),
            None,
        );
        let accounted = Accounted {
            dockerd,
            account,
            dir,
        };
        let tar = tiny_image(&accounted.dir.join("image"));
        let import = accounted
            .docker()
            .args(["import", tar.to_str().unwrap(), IMAGE])
            .output()
            .unwrap();
        assert!(import.status.success(), "{import:?}");
        accounted
    }

    pub fn docker(&self) -> Command {
        self.dockerd.docker()
    }

    pub fn socket(&self) -> &Path {
        &self.dockerd.socket
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `docker ARGS`, which must succeed: its stdout, trimmed.
    pub fn ok(&self, args: &[&str]) -> String {
        let output = self.docker().args(args).output().unwrap();
        assert!(
            output.status.success(),
            "docker {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// `docker run --rm` of `args` in the tiny image under `runtime` (the
    /// daemon's default when empty), `/data` on `disk` when given; the
    /// container's id and output.
    pub fn run(&self, runtime: &str, disk: Option<&LoopFs>, args: &[&str]) -> (String, String) {
        let cid = self.dir.join(&format!("cid-{}", unique()));
        let mut docker = self.docker();
        docker.args(["run", "--rm", "--network=none"]);
        if !runtime.is_empty() {
            docker.args(["--runtime", runtime]);
        }
        docker.arg("--cidfile").arg(&cid);
        if let Some(disk) = disk {
            docker
                .arg("-v")
                .arg(format!("{}:/data", disk.path().display()));
        }
        let output = docker.arg(IMAGE).args(args).output().unwrap();
        assert!(
            output.status.success(),
            "docker run {args:?}: {}\n{}",
            String::from_utf8_lossy(&output.stderr),
            self.dockerd.daemon.log_text()
        );
        let id = fs::read_to_string(&cid).unwrap();
        (id, String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// A container of the tiny image left holding (`run -d -i`) under
    /// `runtime`: its id.
    pub fn hold(&self, runtime: &str) -> String {
        self.ok(&[
            "run",
            "-d",
            "-i",
            "--network=none",
            "--runtime",
            runtime,
            IMAGE,
            "/bin/hold",
        ])
    }

    /// `eatmydata-runtime report --json ARGS` on this account.
    pub fn report(&self, args: &[&str]) -> Value {
        self.report_in(args, None)
    }

    /// [`Accounted::report`], its `TMPDIR` at `tmp` when given: a folder
    /// of the disk whose flushes it is to estimate (`report` times flushes
    /// only in its own folders).
    pub fn report_in(&self, args: &[&str], tmp: Option<&Path>) -> Value {
        let mut report = Command::new(runtime());
        if let Some(tmp) = tmp {
            report.env("TMPDIR", tmp);
        }
        let output = report
            .arg("report")
            .arg("--json")
            .args(args)
            .env("EATMYDATA_HOME", &self.account)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        serde_json::from_slice(&output.stdout).unwrap()
    }

    /// `eatmydata-runtime report` on this account: the text a person
    /// reads at a terminal.
    pub fn report_text(&self) -> String {
        let output = Command::new(runtime())
            .arg("report")
            .env("EATMYDATA_HOME", &self.account)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The account's records by container id, once `ids` are all there
    /// (a container's `delete` may come just after `docker run --rm`
    /// returns).
    pub fn records(&self, ids: &[String]) -> BTreeMap<String, Value> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let report = self.report(&[]);
            let records: BTreeMap<String, Value> = report["containers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| (r["id"].as_str().unwrap().to_owned(), r.clone()))
                .collect();
            if ids.iter().all(|id| records.contains_key(id)) {
                return records;
            }
            assert!(Instant::now() < deadline, "records missing: {report:#}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

fn unique() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A root with `/bin/sync` (the sync probe, dynamic) and `/bin/fill`,
/// the libraries they load, and the folders a container needs, archived.
pub fn tiny_image(root: &Path) -> PathBuf {
    let programs = [
        ("sync", probe("seccomp_sync", &[])),
        ("fill", probe("fill", &[])),
        ("hold", probe("hold", &[])),
        ("keep", probe("keep_mounts", &[])),
    ];
    for dir in ["bin", "data", "dev", "proc", "sys", "tmp", "etc"] {
        fs::create_dir_all(root.join(dir)).unwrap();
    }
    for (name, program) in &programs {
        fs::copy(program, root.join("bin").join(name)).unwrap();
        let ldd = Command::new("ldd").arg(program).output().unwrap();
        for library in String::from_utf8_lossy(&ldd.stdout)
            .split_whitespace()
            .filter(|word| word.starts_with('/'))
        {
            let inside = root.join(library.trim_start_matches('/'));
            fs::create_dir_all(inside.parent().unwrap()).unwrap();
            fs::copy(library, &inside).unwrap();
        }
    }
    let tar = root.with_extension("tar");
    let status = Command::new("tar")
        .arg("-C")
        .arg(root)
        .arg("-cf")
        .arg(&tar)
        .arg(".")
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    tar
}

fn count(record: &Value, kind: &str) -> u64 {
    record["skips"][kind].as_u64().unwrap()
}

/// 20 containers at once, each syncing a number of times of its own: 20
/// records, each with its count, adding up exactly; the per-container
/// folders gone once they are deleted.
#[test]
fn twenty_containers_at_once_give_twenty_exact_records() {
    let docker = Accounted::start("account-20");
    let disk = LoopFs::new("account-20", 64);
    let wanted: Vec<u64> = (0..20).map(|n| 10 + n).collect();
    let ids: Vec<(String, u64)> = std::thread::scope(|scope| {
        let runs: Vec<_> = wanted
            .iter()
            .enumerate()
            .map(|(n, &syncs)| {
                let (docker, disk) = (&docker, &disk);
                scope.spawn(move || {
                    let file = format!("/data/c{n}");
                    let syncs_text = syncs.to_string();
                    let args = ["/bin/sync", "loop", &file, &syncs_text];
                    let (id, out) = docker.run("eatmydata", Some(disk), &args);
                    assert_eq!(out, format!("synced {syncs}\n"));
                    (id, syncs)
                })
            })
            .collect();
        runs.into_iter().map(|run| run.join().unwrap()).collect()
    });
    let names: Vec<String> = ids.iter().map(|(id, _)| id.clone()).collect();
    let records = docker.records(&names);
    assert_eq!(records.len(), 20, "{records:#?}");
    for (id, syncs) in &ids {
        let record = &records[id];
        assert_eq!(count(record, "fsync"), *syncs, "{record:#}");
        assert_eq!(record["processes"], 1, "{record:#}");
        let on = &record["flushes"][0];
        assert_eq!(on["count"].as_u64(), Some(*syncs), "{record:#}");
        assert!(on["on"].as_str().unwrap().contains("ext4"), "{record:#}");
        // By mount: the bind at /data took them all.
        let by_mount = json!([{"on": "/data", "flushes": syncs}]);
        assert_eq!(record["eaten_by_mount"], by_mount, "{record:#}");
        assert!(!docker.account.join("containers").join(id).exists());
    }
    let report = docker.report(&[]);
    let total: u64 = wanted.iter().sum();
    assert_eq!(report["total"]["containers"], 20);
    assert_eq!(report["total"]["skips"]["fsync"].as_u64(), Some(total));
    assert_eq!(report["total"]["flushes_skipped"].as_u64(), Some(total));
    assert_eq!(report["unreadable_account_lines"], 0);
    eprintln!(
        "account: 20 containers, {total} fsyncs skipped: {:#}",
        report["total"]
    );
}

/// A container that writes 100 MB of garbage into its report file fills
/// its own small tmpfs and costs itself its record, nothing else: the
/// account stays readable, the others' records whole; and a record cut
/// short in the account (a runtime killed mid-write, written here by hand)
/// is skipped, counted, and closed by the next writer.
#[test]
fn garbage_and_a_torn_record_cost_nothing_else() {
    let docker = Accounted::start("account-garbage");
    let (before, _) = docker.run("eatmydata", None, &["/bin/sync", "loop", "/tmp/f", "7"]);
    let (garbage, out) = docker.run("eatmydata", None, &["/bin/fill", REPORT, "100"]);
    let wrote: u64 = out.trim().strip_prefix("wrote ").unwrap().parse().unwrap();
    assert!(
        wrote <= 256 * 1024,
        "the container wrote {wrote} bytes past its tmpfs"
    );
    let records = docker.records(&[before.clone(), garbage.clone()]);
    assert_eq!(count(&records[&before], "fsync"), 7);
    let spoiled = &records[&garbage];
    assert_eq!(spoiled["processes"], 0, "{spoiled:#}");
    assert!(spoiled["unreadable"].as_u64().unwrap() > 100, "{spoiled:#}");
    // A runtime killed in the middle of its record: half a line, no end.
    let file = docker.account.join("account.jsonl");
    let text = fs::read_to_string(&file).unwrap();
    let last = text.lines().last().unwrap();
    let torn = last.replace(&garbage, "torn0000");
    fs::write(&file, format!("{text}{}", &torn[..torn.len() / 2])).unwrap();
    let report = docker.report(&[]);
    assert_eq!(report["unreadable_account_lines"], 1, "{report:#}");
    assert_eq!(report["total"]["containers"], 2);
    let (after, _) = docker.run("eatmydata", None, &["/bin/sync", "loop", "/tmp/f", "5"]);
    let records = docker.records(&[before.clone(), garbage, after.clone()]);
    assert_eq!(count(&records[&before], "fsync"), 7);
    assert_eq!(count(&records[&after], "fsync"), 5);
    let report = docker.report(&[]);
    assert_eq!(report["unreadable_account_lines"], 1, "{report:#}");
    assert_eq!(report["total"]["containers"], 3);
    assert_eq!(report["total"]["skips"]["fsync"], 12);
    // The same containers under plain runc: no record.
    let (plain, _) = docker.run("runc", None, &["/bin/sync", "loop", "/tmp/f", "5"]);
    std::thread::sleep(Duration::from_secs(1));
    let report = docker.report(&[]);
    let ids = ids(&report);
    assert!(!ids.contains(&plain.as_str()));
}

/// `COMMAND` as the user nobody, as another local user would run it.
fn as_nobody(args: &[&str]) -> Command {
    let mut command = Command::new("runuser");
    command.args(["-u", "nobody", "--"]).args(args);
    command
}

/// A `flock -x` of `lock` held for a minute by `command` (`flock` as a
/// user or as root), once it holds it; killed when dropped, with its
/// process group (flock's `sleep`).
struct Held(std::process::Child);

impl Held {
    fn new(mut command: Command, lock: &Path) -> Held {
        let child = command
            .args(["-x", lock.to_str().unwrap(), "sleep", "60"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        // Held once a try of our own fails.
        while Command::new("flock")
            .args(["-n", lock.to_str().unwrap(), "true"])
            .status()
            .unwrap()
            .success()
        {
            assert!(Instant::now() < deadline, "flock never held {lock:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Held(child)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let group = -i32::try_from(self.0.id()).unwrap();
        // SAFETY: kill touches no memory; the group is the child's own.
        unsafe { libc::kill(group, libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

/// Seconds `docker rm -f` of a container started by `runtime` takes.
fn timed_rm(docker: &Accounted, runtime: &str) -> (String, f64) {
    let id = docker.hold(runtime);
    docker.ok(&["exec", &id, "/bin/sync", "loop", "/tmp/f", "3"]);
    let start = Instant::now();
    docker.ok(&["rm", "-f", &id]);
    (id, start.elapsed().as_secs_f64())
}

/// Another local user, as the attacker did: `flock -x` on the account's
/// lock (0644 before: `docker rm -f` hung as long as the user held it,
/// and docker leaked the task), and a line appended to a container's
/// report file (0666 in folders every user could enter: a forged record).
/// Now the user cannot open the lock, a lock an older runtime left 0644
/// and the user holds is replaced, and the report is out of reach. A lock
/// held by root (a runtime stopped under it) costs the delete at most a
/// second, and only its record. Each `rm -f` is timed beside the same
/// under runc.
#[test]
fn another_user_neither_holds_up_deletes_nor_forges_records() {
    let docker = Accounted::start("account-user");
    fs::create_dir_all(&docker.account).unwrap();
    let lock = docker.account.join("account.lock");
    // An older runtime's lock, which any user could open, held by one.
    fs::write(&lock, "").unwrap();
    Command::new("chmod")
        .arg("0644")
        .arg(&lock)
        .status()
        .unwrap();
    let user = Held::new(as_nobody(&["flock"]), &lock);
    let (_, plain) = timed_rm(&docker, "runc");
    let id = docker.hold("eatmydata");
    docker.ok(&["exec", &id, "/bin/sync", "loop", "/tmp/f", "3"]);
    let report = docker.account.join("containers").join(&id).join("report");
    let forge = format!(
        "printf 'pid=1 name=x fsync=999999999\\n' >> {}",
        report.display()
    );
    let forged = as_nobody(&["sh", "-c", &forge]).output().unwrap();
    let start = Instant::now();
    docker.ok(&["rm", "-f", &id]);
    let ours = start.elapsed().as_secs_f64();
    eprintln!("account: rm -f with a user's flock -x: {ours:.2} s (runc: {plain:.2} s)");
    let forged = forged
        .status
        .success()
        .then(|| format!("the user wrote {report:?}"));
    let slow =
        (ours >= plain + 2.0).then(|| format!("rm -f took {ours:.2} s, runc's {plain:.2} s"));
    let failed: Vec<String> = [slow, forged].into_iter().flatten().collect();
    assert!(failed.is_empty(), "{failed:?}");
    let records = docker.records(std::slice::from_ref(&id));
    assert_eq!(count(&records[&id], "fsync"), 3, "{:#}", records[&id]);
    drop(user);
    let mode = fs::metadata(&lock).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );
    let opened = as_nobody(&["flock", "-x", lock.to_str().unwrap(), "true"])
        .output()
        .unwrap();
    assert!(!opened.status.success(), "the user opened the lock");
    // Root holds it: the delete goes on within a second, without a record.
    let root = Held::new(Command::new("flock"), &lock);
    let (_, plain) = timed_rm(&docker, "runc");
    let (lost, ours) = timed_rm(&docker, "eatmydata");
    eprintln!("account: rm -f with root's flock -x: {ours:.2} s (runc: {plain:.2} s)");
    assert!(
        ours < plain + 2.0,
        "rm -f took {ours:.2} s, under runc {plain:.2} s"
    );
    assert!(!docker.account.join("containers").join(&lost).exists());
    drop(root);
    std::thread::sleep(Duration::from_secs(1));
    let report = docker.report(&[]);
    let ids = ids(&report);
    assert_eq!(ids, [id.as_str()], "{report:#}");
}

/// `report` on an account whose record names a file system (by device
/// number, which a container's report line gives) mounted at a name
/// holding ESC sequences and `<script>`: the terminal and the CI page get
/// them as text, and no scratch file is made or flushed there (strace).
/// Failed before: the name printed raw, and `.eatmydata-flush-*` created
/// and fsynced at that mount point.
#[test]
fn report_writes_nowhere_unasked_and_prints_names_as_text() {
    let dir = RunDir::new("account-shown");
    let point = dir.join("\u{1b}]0;owned\u{7}\u{1b}[2J<script>alert(1)</script>");
    fs::create_dir_all(&point).unwrap();
    let mount = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "shown"])
        .arg(&point)
        .status()
        .unwrap();
    assert!(mount.success());
    let _unmounted = super::daemon::Unmounted(point.clone());
    let dev = std::os::unix::fs::MetadataExt::dev(&fs::metadata(&point).unwrap());
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let account = dir.join("account");
    fs::create_dir_all(&account).unwrap();
    let record = serde_json::json!({
        "v": 1, "id": "c1", "name": "db\u{1b}[31m", "image": "img<b>", "ended": "2026-12-02T10:00:00Z",
        "processes": 1,
        "skips": {"fsync": 5, "sync": 0, "range": 0, "msync": 0, "open": 0, "write": 0, "direct": 0},
        "flushes": [{"device": format!("{major}:{minor}"), "count": 5, "on": ""}],
        "flushes_unnamed": 0, "unreadable": 0,
        "eaten_by_mount": [{"on": "/data\u{1b}[2J", "flushes": 5}]
    });
    fs::write(account.join("account.jsonl"), format!("{record}\n")).unwrap();
    for format in ["--markdown", "--since=100000d"] {
        let trace = dir.join(&format!("trace{format}"));
        let output = Command::new("strace")
            .arg("-f")
            .arg("-o")
            .arg(&trace)
            .args(["-e", "trace=open,openat,creat", "--"])
            .arg(runtime())
            .args(["report", format])
            .env("EATMYDATA_ACCOUNT", &account)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{output:?}");
        // The mount's name is there, shown as text.
        assert!(out.contains("alert"), "{out}");
        assert!(!out.contains('\u{1b}'), "an ESC printed: {out:?}");
        if format == "--markdown" {
            assert!(!out.contains("<script"), "{out}");
        }
        let trace = fs::read_to_string(&trace).unwrap();
        let made: Vec<&str> = trace
            .lines()
            .filter(|l| l.contains("O_CREAT") && l.contains(".eatmydata-flush"))
            .collect();
        assert!(made.is_empty(), "scratch files: {made:#?}");
    }
}

/// A process `docker exec` starts in a container under the runtime (its
/// `exec --process` file) is counted in the container's record too; a
/// container under runc gets no record, nor one whose binds at the
/// runtime's places are the user's.
#[test]
fn exec_processes_are_counted_and_runc_containers_are_not() {
    let docker = Accounted::start("account-exec");
    let mut ids = Vec::new();
    for runtime in ["eatmydata", "runc"] {
        let id = docker.hold(runtime);
        let out = docker.ok(&["exec", &id, "/bin/sync", "loop", "/tmp/f", "9"]);
        assert_eq!(out, "synced 9");
        // Its report folder under EATMYDATA_HOME, never the machine's.
        let folder = docker.account.join("containers").join(&id);
        assert_eq!(folder.is_dir(), runtime == "eatmydata", "{folder:?}");
        assert!(!Path::new("/run/eatmydata/containers").join(&id).exists());
        docker.ok(&["rm", "-f", &id]);
        ids.push(id);
    }
    // A user's own bind at the runtime's report path, or of the library
    // at its place with LD_PRELOAD naming it, is the user's (issue 45):
    // the container is left as runc leaves it, with no folder and no
    // record, the user's file untouched.
    let dir = TempDir::new("account-own-binds");
    let (file, library) = (dir.join("report"), dir.join("libeatmydata.so"));
    fs::write(&file, "").unwrap();
    fs::copy(crate::common::library(), &library).unwrap();
    let binds = [
        format!("{}:{REPORT}", file.display()),
        format!("{}:/dev/.eatmydata/libeatmydata.so:ro", library.display()),
    ];
    for bind in &binds {
        let id = docker.ok(&[
            "run",
            "-d",
            "-i",
            "--network=none",
            "--runtime",
            "eatmydata",
            "-v",
            bind,
            "-e",
            "LD_PRELOAD=/dev/.eatmydata/libeatmydata.so",
            IMAGE,
            "/bin/hold",
        ]);
        let out = docker.ok(&["exec", &id, "/bin/sync", "loop", "/tmp/f", "9"]);
        assert_eq!(out, "synced 9");
        let folder = docker.account.join("containers").join(&id);
        assert!(!folder.exists(), "{bind}: {folder:?}");
        docker.ok(&["rm", "-f", &id]);
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), "", "the user's file");
    let records = docker.records(&ids[..1]);
    let record = &records[&ids[0]];
    assert_eq!(count(record, "fsync"), 9, "{record:#}");
    assert_eq!(record["processes"], 1, "{record:#}");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(docker.report(&[])["total"]["containers"], 1);
}

/// A loop file system whose image has every block written first: on a
/// sparse image, the report's scratch pages (new blocks of the image)
/// cost the host's allocation at each flush too, as no real disk does,
/// and its estimate came out 3 to 8 times the runs' own flushes.
fn written_disk(label: &str, megabytes: u32) -> LoopFs {
    let scratch = TempDir::new(label);
    let image = scratch.join("image");
    let status = Command::new("dd")
        .args(["if=/dev/zero", "bs=1M", "status=none", "conv=fsync"])
        .arg(format!("count={megabytes}"))
        .arg(format!("of={}", image.display()))
        .status()
        .expect("run dd");
    assert!(status.success(), "dd the image");
    LoopFs::with_image(scratch, image, megabytes)
}

/// The time saved that `report` estimates for containers syncing to a
/// loop-device ext4, against what the same container's flushes took
/// without the runtime. The one timing this suite compares, because the
/// estimate is a time.
///
/// Each round is a plain run that times its own fsyncs (`sync timed`: the
/// time its 2,000 flushes took, which is what eatmydata saves, without the
/// start and end of a container, whose cost under load swung the old
/// comparison of whole runs), an eaten run, and a report right after, its
/// scratch file on the same disk (its `TMPDIR`: `report` times flushes
/// only in its own folders): seconds apart, under the same load. The
/// disk's image has every block written (`written_disk`). The verdict is
/// the median of five rounds' ratios of the estimate to the time measured.
///
/// The bound is a factor of four either way, not two: a flush `report`
/// times on the host is not one of the container's, and on a busy machine
/// 24 flushes in a fraction of a second swing from one report to the
/// next. Measured on 2026-12-03 (six engineers on 2 cores, load 11-13):
/// the containers' 2,000 fsyncs took 1.8 to 4.8 s and the estimates,
/// their samples' waits for a CPU not yet taken off, 2.1 to 9.7 s (median
/// ratio 2.45); with `stress-ng --cpu 4` beside it (load 19) five rounds'
/// ratios went up to 30 and the median to 4.9 and 7.9. `report` now takes
/// each sample's run-queue wait off (`estimate/timing.rs`): three runs
/// beside `stress-ng --cpu 4`, medians 2.49, 1.85 and 0.73 (rounds 0.47
/// to 10.2). What the test still catches: an estimate of nothing (median
/// 0.00) or ten times the truth (median 10.0), both tried.
#[test]
fn the_time_saved_is_estimated_within_a_factor_of_four() {
    const ROUNDS: usize = 5;
    let docker = Accounted::start("account-estimate");
    let disk = written_disk("account-estimate", 64);
    // The plain container's fsyncs, timed by itself.
    let timed = |syncs: &str| -> f64 {
        let (_, said) = docker.run(
            "runc",
            Some(&disk),
            &["/bin/sync", "timed", "/data/f", syncs],
        );
        said.trim()
            .strip_prefix(&format!("synced {syncs} in "))
            .and_then(|rest| rest.strip_suffix(" s"))
            .and_then(|seconds| seconds.parse().ok())
            .unwrap_or_else(|| panic!("the plain run said {said:?}"))
    };
    // Enough fsyncs for half a second or more: 2,000 took 0.36 s on a
    // quiet machine, 1.8 to 4.8 s on a busy one. Chosen before any
    // container is eaten, so that every round makes as many.
    let mut syncs = 2000u32;
    while syncs < 32_000 && timed(&syncs.to_string()) < 0.5 {
        syncs *= 2;
    }
    let syncs = syncs.to_string();
    let mut rounds = Vec::new();
    for runs in 1..=ROUNDS {
        let start = Instant::now();
        let measured = timed(&syncs);
        let plain = start.elapsed().as_secs_f64();
        let start = Instant::now();
        docker.run(
            "eatmydata",
            Some(&disk),
            &["/bin/sync", "loop", "/data/f", &syncs],
        );
        let eaten = start.elapsed().as_secs_f64();
        // The account is the test's own: its eaten containers so far, at
        // the cost of a flush timed now.
        let report = docker.report_in(&[], Some(disk.path()));
        assert_eq!(report["total"]["containers"], runs, "{report:#}");
        let saved = report["estimate"]["saved_seconds"]
            .as_f64()
            .unwrap_or_else(|| panic!("no estimate: {report:#}"));
        let estimate = saved / runs as f64;
        eprintln!(
            "account: round {runs}: plain {plain:.2} s, eaten {eaten:.2} s, its fsyncs \
             {measured:.2} s, estimated {estimate:.2} s saved ({:.2} to {:.2}), load {}",
            report["estimate"]["saved_seconds_low"]
                .as_f64()
                .unwrap_or(0.0)
                / runs as f64,
            report["estimate"]["saved_seconds_high"]
                .as_f64()
                .unwrap_or(0.0)
                / runs as f64,
            fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .trim(),
        );
        assert!(
            measured > 0.25,
            "too little to compare: {measured:.2} s for {syncs} fsyncs"
        );
        eprintln!("account: round {runs}: ratio {:.2}", estimate / measured);
        rounds.push(estimate / measured);
    }
    rounds.sort_by(f64::total_cmp);
    let ratio = rounds[ROUNDS / 2];
    assert!(
        (0.25..=4.0).contains(&ratio),
        "the median ratio of estimated to measured is {ratio:.2}: {rounds:.2?}"
    );
}

/// The fsyncs a keep-by-mount container makes on each of its two disks.
const KEPT_SYNCS: u64 = 100;

/// `docker run --rm` of the tiny image's `keep_mounts fsync` (dynamic),
/// [`KEPT_SYNCS`] fsyncs to `/data/f` then as many to `/keep/f`, `a` at
/// `/data` and `b` at `/keep`, under `runtime` with `env`: the
/// container's id, and the flushes each disk counted meanwhile.
pub(super) fn keep_run(
    docker: &Accounted,
    runtime: &str,
    env: &[&str],
    a: &LoopFs,
    b: &LoopFs,
) -> (String, u64, u64) {
    let cid = docker.dir().join(format!("cid-{}", unique()));
    let mut command = docker.docker();
    command
        .args(["run", "--rm", "--network=none", "--runtime", runtime])
        .arg("--cidfile")
        .arg(&cid)
        .arg("-v")
        .arg(format!("{}:/data", a.path().display()))
        .arg("-v")
        .arg(format!("{}:/keep", b.path().display()));
    for one in env {
        command.args(["-e", one]);
    }
    let count = KEPT_SYNCS.to_string();
    command.args([IMAGE, "/bin/keep", "fsync", &count, "/data/f", "/keep/f"]);
    let mut on_b = 0;
    let on_a = a.flushes_during(|| {
        on_b = b.flushes_during(|| {
            let output = command.output().unwrap();
            assert!(output.status.success(), "{runtime} {env:?}: {output:?}");
        })
    });
    (fs::read_to_string(&cid).unwrap(), on_a, on_b)
}

/// A container's flushes by mount destination as `report --json` gives
/// them: destination, eaten, kept (`None` where not counted).
fn by_mount(record: &Value) -> BTreeMap<String, (u64, Option<u64>)> {
    let list = record["by_mount"].as_array().expect("by_mount");
    list.iter()
        .map(|one| {
            let on = one["on"].as_str().unwrap().to_owned();
            (on, (one["eaten"].as_u64().unwrap(), one["kept"].as_u64()))
        })
        .collect()
}

/// Whether `count` is the fsyncs made, give or take what else the
/// program synced (its start, its exit: a few at most).
fn about(count: u64) -> bool {
    (KEPT_SYNCS..=KEPT_SYNCS + 5).contains(&count)
}

/// The account by mount, eaten and kept (issue 35): a container with
/// `-v A:/data -v B:/keep -e EATMYDATA_KEEP=/keep`, 100 fsyncs to each
/// (a dynamic program), shows `/data` with ~100 eaten and 0 kept and
/// `/keep` with ~100 kept and 0 eaten, in `--json` and the text; the
/// disks agree (`/data` no more flushes than a floor allows beside runc's
/// run, `/keep` a flush for at least 95% of its fsyncs). The same
/// container without the variable: both eaten, 0 kept, and no word on
/// what kept counts leave out.
#[test]
fn the_account_tells_each_mount_eaten_and_kept() {
    let docker = Accounted::start("account-keep");
    let (a, b) = (
        LoopFs::new("acct-keep-data", 64),
        LoopFs::new("acct-keep-keep", 64),
    );
    let keep = ["EATMYDATA_KEEP=/keep"];
    let (_, plain_a, plain_b) = keep_run(&docker, "runc", &keep, &a, &b);
    let (kept, ours_a, ours_b) = keep_run(&docker, "eatmydata", &keep, &a, &b);
    let (control, all_a, all_b) = keep_run(&docker, "eatmydata", &[], &a, &b);
    eprintln!(
        "account: flushes /data, /keep: runc {plain_a}, {plain_b}; EATMYDATA_KEEP=/keep \
         {ours_a}, {ours_b}; no variable {all_a}, {all_b}"
    );
    let floor = |disk: &LoopFs| crate::common::floor_writing(disk, "floor", KEPT_SYNCS as usize);
    let judged = |control, eaten, disk: &LoopFs, what: &str| {
        crate::common::Flushes {
            control,
            floor: floor(disk),
            eaten,
        }
        .assert_eaten(KEPT_SYNCS, what)
    };
    judged(plain_a, ours_a, &a, "EATMYDATA_KEEP=/keep: /data");
    assert!(
        ours_b * 100 >= KEPT_SYNCS * 95,
        "/keep kept: {ours_b} flushes (runc {plain_b})"
    );
    judged(plain_a, all_a, &a, "no variable: /data");
    judged(plain_b, all_b, &b, "no variable: /keep");

    let records = docker.records(&[kept.clone(), control.clone()]);
    let (kept_record, control_record) = (&records[&kept], &records[&control]);
    let mounts = by_mount(kept_record);
    let (data, keep) = (mounts["/data"], mounts["/keep"]);
    assert!(about(data.0) && data.1 == Some(0), "/data: {kept_record:#}");
    assert!(
        keep.0 == 0 && keep.1.is_some_and(about),
        "/keep: {kept_record:#}"
    );
    assert_eq!(kept_record["keeps"], json!(["/keep"]), "{kept_record:#}");
    assert!(
        kept_record["kept_not_counted"]
            .as_str()
            .unwrap()
            .contains("static")
    );
    let mounts = by_mount(control_record);
    let (data, keep) = (mounts["/data"], mounts["/keep"]);
    assert!(
        about(data.0) && data.1 == Some(0),
        "/data: {control_record:#}"
    );
    assert!(
        about(keep.0) && keep.1 == Some(0),
        "/keep: {control_record:#}"
    );
    assert_eq!(control_record["kept_unnamed"], 0, "{control_record:#}");
    assert!(control_record["kept_not_counted"].is_null());
    let total = docker.report(&[])["total"]["flushes_kept"]
        .as_u64()
        .unwrap();
    assert!(about(total), "{total}");

    // The text a person reads: under the container, each destination.
    let text = docker.report_text();
    eprintln!("account: report:\n{text}");
    let under = |id: &str| -> Vec<String> {
        let short: String = id.chars().take(12).collect();
        text.lines()
            .skip_while(|line| !line.contains(&short))
            .skip(1)
            .take_while(|line| line.starts_with("      "))
            .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    };
    let (data, keep) = (
        format!("/data eaten {}, kept 0", by_mount(kept_record)["/data"].0),
        format!(
            "/keep eaten 0, kept {}",
            by_mount(kept_record)["/keep"].1.unwrap()
        ),
    );
    let lines = under(&kept);
    assert!(lines.contains(&data) && lines.contains(&keep), "{text}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("keeps /keep (kept counts are of dynamic")),
        "{text}"
    );
    let lines = under(&control);
    for on in ["/data eaten", "/keep eaten"] {
        assert!(lines.iter().any(|l| l.starts_with(on)), "{on}: {text}");
    }
    assert!(lines.iter().all(|l| l.ends_with("kept 0")), "{text}");
}

/// The ids of the containers a `report --json` lists.
fn ids(report: &serde_json::Value) -> Vec<&str> {
    report["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect()
}
