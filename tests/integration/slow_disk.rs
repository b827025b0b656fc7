//! `scripts/slow-disk`: a device whose every flush takes the latency it
//! was given, and whose server answered exactly the flushes the kernel
//! counted. A program's syncs pay that latency plain, and not under
//! eatmydata.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

use crate::common::{Flushes, TempDir, command, quiet_disks};

/// The FUSE server, built on first use for the profile of the tests (a
/// workspace member the default build leaves out).
fn server() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let path =
                PathBuf::from(env!("CARGO_BIN_EXE_eatmydata")).with_file_name("eatmydata-slowdisk");
            let mut cargo = Command::new(env!("CARGO"));
            cargo.args([
                "build",
                "--quiet",
                "-p",
                "eatmydata-slowdisk",
                "--manifest-path",
            ]);
            cargo.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"));
            let profile = path.parent().and_then(Path::file_name);
            if let Some(profile) = profile.filter(|dir| *dir != "debug") {
                cargo.arg("--profile").arg(profile);
            }
            let status = cargo
                .status()
                .expect("run cargo build -p eatmydata-slowdisk");
            assert!(status.success(), "cargo build -p eatmydata-slowdisk failed");
            path
        })
        .clone()
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slow-disk")
}

/// A slow device with a journaled ext4 on it, taken away when dropped.
pub struct SlowDisk {
    // Dropped after the device: its folder holds the device's file.
    scratch: TempDir,
    pub device: String,
}

impl SlowDisk {
    /// `scripts/slow-disk start DIR MS --ext4` with a small device: its
    /// self-checks (dd oflag=dsync on the device and on the ext4) passed.
    pub fn start(label: &str, latency_ms: f64) -> SlowDisk {
        let scratch = TempDir::new(label);
        let output = Command::new(script())
            .arg("start")
            .arg(scratch.path())
            .arg(latency_ms.to_string())
            .args(["--size", "0.25", "--ext4"])
            .env("EATMYDATA_SLOWDISK", server())
            .output()
            .expect("run scripts/slow-disk start");
        let stderr = String::from_utf8_lossy(&output.stderr);
        eprintln!("{stderr}");
        assert!(output.status.success(), "slow-disk start failed: {stderr}");
        let device = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        assert!(
            device.starts_with("/dev/loop"),
            "slow-disk printed {device:?}"
        );
        let disk = SlowDisk { scratch, device };
        // Commits on request only, as `LoopFs` does: an idle journal adds
        // no flush to a count on its own timer.
        let mount = disk.mount().to_str().expect("a UTF-8 path").to_owned();
        let remount = Command::new("mount")
            .args(["-o", "remount,commit=600", &mount])
            .status()
            .expect("run mount");
        assert!(remount.success());
        disk
    }

    /// Where the ext4 is mounted.
    pub fn mount(&self) -> PathBuf {
        self.scratch.join("mnt")
    }

    /// What `start` recorded: the checks and the latency a user sees.
    pub fn state(&self) -> serde_json::Value {
        let text = std::fs::read_to_string(self.scratch.join("state.json")).expect("state");
        serde_json::from_str(&text).expect("slow-disk's state is JSON")
    }

    /// The latency a user sees on the ext4 now, in seconds: what
    /// `start` records, measured again (`scripts/slow-disk fdatasync`).
    pub fn fdatasync(&self) -> f64 {
        let output = Command::new(script())
            .arg("fdatasync")
            .arg(self.scratch.path())
            .output()
            .expect("run scripts/slow-disk fdatasync");
        assert!(output.status.success(), "slow-disk fdatasync failed");
        let ms: f64 = String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .expect("ms");
        ms / 1e3
    }

    /// Flushes since start: (answered by the server, counted by the kernel).
    pub fn counts(&self) -> (u64, u64) {
        let output = Command::new(script())
            .arg("flushes")
            .arg(self.scratch.path())
            .output()
            .expect("run scripts/slow-disk flushes");
        assert!(output.status.success(), "slow-disk flushes failed");
        let counts: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
        let count = |key: &str| counts[key].as_u64().expect("a count");
        (count("served"), count("kernel"))
    }

    /// The kernel's flushes while `run` ran, the journal written out first;
    /// and asserts that the server answered every one of them.
    pub fn flushes_during(&self, run: impl FnOnce()) -> u64 {
        let synced = Command::new("sync").arg("-f").arg(self.mount()).status();
        assert!(synced.expect("run sync").success());
        let before = self.counts();
        run();
        let after = self.counts();
        let (served, kernel) = (after.0 - before.0, after.1 - before.1);
        assert_eq!(
            served, kernel,
            "flushes answered by the server and counted by the kernel"
        );
        kernel
    }
}

impl Drop for SlowDisk {
    fn drop(&mut self) {
        let _ = Command::new(script())
            .arg("stop")
            .arg(self.scratch.path())
            .status();
    }
}

/// `dd` of 20 writes of 4 KiB to `file`, `prefix` before it; its seconds.
fn dd(prefix: &[&Path], file: &Path, dsync: bool) -> f64 {
    let mut argv: Vec<&std::ffi::OsStr> = prefix.iter().map(|p| p.as_os_str()).collect();
    argv.push("dd".as_ref());
    let of = format!("of={}", file.display());
    let mut args = vec!["if=/dev/zero", &of, "bs=4k", "count=20", "status=none"];
    if dsync {
        args.push("oflag=dsync");
    }
    let began = Instant::now();
    let status = Command::new(argv[0])
        .args(&argv[1..])
        .args(&args)
        .status()
        .expect("run dd");
    assert!(status.success(), "dd {args:?} failed");
    began.elapsed().as_secs_f64()
}

#[test]
fn each_flush_waits_and_eatmydata_waits_for_none() {
    let disk = SlowDisk::start("slow-disk", 10.0);
    let state = disk.state();
    let user = state["fdatasync_ms"]
        .as_f64()
        .expect("the fdatasync latency recorded");
    assert!(
        user >= 10.0,
        "an fdatasync on the ext4 took {user} ms, under the 10 ms latency"
    );
    let _quiet = quiet_disks();
    let eatmydata = command();
    let mut plain_time = 0.0;
    let control = disk.flushes_during(|| plain_time = dd(&[], &disk.mount().join("a"), true));
    let floor = disk.flushes_during(|| {
        dd(&[], &disk.mount().join("b"), false);
    });
    let mut eaten_time = 0.0;
    let eaten = disk.flushes_during(|| {
        eaten_time = dd(
            &[&eatmydata, Path::new("--")],
            &disk.mount().join("c"),
            true,
        )
    });
    eprintln!(
        "20 dsync writes on {}: plain {plain_time:.3} s, eatmydata {eaten_time:.3} s",
        disk.device
    );
    Flushes {
        control,
        floor,
        eaten,
    }
    .assert_eaten(20, "dd oflag=dsync on the slow disk");
    assert!(
        plain_time >= 0.2,
        "20 dsync writes took {plain_time:.3} s plain, under 20 x 10 ms"
    );
    assert!(
        eaten_time <= plain_time / 4.0,
        "under eatmydata {eaten_time:.3} s, more than a quarter of plain's {plain_time:.3} s"
    );
}
