//! A file system of a test's own: a fresh, journaled ext4 on a loop device
//! over a file, mounted in a scratch folder. Its line in `/proc/diskstats`
//! counts only what the test did, whatever else the machine is doing, and
//! its backing file can be read past the page cache: what a test there
//! wrote has reached the "disk" only once it is in that file.
//!
//! One fsync on journaled ext4 is about two flush requests on the device
//! (the journal commit's pre-flush and its FUA write). The journal is not
//! committed on a timer (`commit=600`), so writes without a sync add few:
//! what they add, and what a busy machine's sync(2) adds, is judged by
//! `common::flushes`, never assumed to be nothing.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::common::{QuietDisks, TempDir, in_whole_machine_sync, quiet_disks, whole_machine_sync};

/// What the device has completed since it was made.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DiskStats {
    pub writes: u64,
    /// 512-byte sectors written.
    pub sectors_written: u64,
    pub flushes: u64,
}

pub struct LoopFs {
    // Dropped last: the image and the mount point live in it.
    scratch: TempDir,
    device: String,
    mount: PathBuf,
    image: PathBuf,
    /// Taken at the first count read, kept to the end: no sync(2) of the
    /// tests adds to the counts meanwhile.
    counting: OnceLock<QuietDisks>,
}

fn run(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run {program}: {e}"));
    assert!(
        output.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

impl LoopFs {
    /// A new ext4 of `megabytes`, made with its inode tables and journal
    /// written at once, so that no background initialisation flushes later.
    pub fn new(label: &str, megabytes: u32) -> LoopFs {
        let scratch = TempDir::new(label);
        let image = scratch.join("image");
        LoopFs::with_image(scratch, image, megabytes)
    }

    /// The same with its image at `image`: on a small tmpfs, say, whose
    /// lack of space makes every writeback past it fail.
    pub fn with_image(scratch: TempDir, image: PathBuf, megabytes: u32) -> LoopFs {
        let size = format!("{megabytes}M");
        let image_str = image.to_str().expect("a UTF-8 scratch path");
        run("truncate", &["-s", &size, image_str]);
        let device = run("losetup", &["--find", "--show", image_str]);
        let options = "lazy_itable_init=0,lazy_journal_init=0";
        run("mkfs.ext4", &["-q", "-F", "-E", options, &device]);
        let made = LoopFs::mounted(scratch, image, device);
        // Anyone may write there, as a test's unprivileged user would.
        run(
            "chmod",
            &["1777", made.mount.to_str().expect("a UTF-8 path")],
        );
        made
    }

    /// The file system on `device` (attached to `image`), mounted in
    /// `scratch`.
    fn mounted(scratch: TempDir, image: PathBuf, device: String) -> LoopFs {
        let mount = scratch.join("mnt");
        fs::create_dir_all(&mount).expect("create a mount point");
        let made = LoopFs {
            scratch,
            device,
            mount,
            image,
            counting: OnceLock::new(),
        };
        made.mount_device();
        made
    }

    fn mount_device(&self) {
        let mount = self.mount.to_str().expect("a UTF-8 scratch path");
        // The journal commits only when asked (fsync, sync, a full journal),
        // not every 5 s on its own: a run whose syncs were all eaten then
        // adds no flush, however long a loaded machine makes it take.
        run("mount", &["-o", "commit=600", &self.device, mount]);
    }

    /// A clean unmount (which writes everything out), the loop device
    /// detached, then attached again and mounted: what is read now comes
    /// from the backing file, as after a reboot, not from any cache of the
    /// device or the file system.
    pub fn remount_cold(&mut self) {
        let mount = self.mount.to_str().expect("a UTF-8 scratch path");
        run("umount", &[mount]);
        run("losetup", &["-d", &self.device]);
        let image = self.image.to_str().expect("a UTF-8 scratch path");
        self.device = run("losetup", &["--find", "--show", image]);
        self.mount_device();
    }

    /// What a power cut now would leave: a copy of the backing file as the
    /// device has received it, mounted (its journal replayed) on a loop
    /// device of its own.
    pub fn cut(&self, label: &str) -> LoopFs {
        let scratch = TempDir::new(label);
        let image = scratch.join("image");
        let image_str = image.to_str().expect("a UTF-8 scratch path");
        let from = self.image.to_str().expect("a UTF-8 scratch path");
        run("cp", &["--sparse=always", from, image_str]);
        let device = run("losetup", &["--find", "--show", image_str]);
        LoopFs::mounted(scratch, image, device)
    }

    /// Where the file system is mounted.
    pub fn path(&self) -> &Path {
        &self.mount
    }

    pub fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.mount.join(name)
    }

    /// The file that holds the file system: read it directly, not through
    /// the mount, to see what reached the device.
    pub fn image(&self) -> &Path {
        &self.image
    }

    /// Whether `marker` has reached the device: it is in the backing file.
    pub fn holds(&self, marker: &str) -> bool {
        // grep, not a search here: tests are built without optimisation.
        let found = Command::new("grep")
            .args(["-q", "-a", "-F", "-e", marker])
            .arg(&self.image)
            .status()
            .expect("run grep");
        assert!(
            found.code().is_some_and(|code| code < 2),
            "grep {}",
            self.image.display()
        );
        found.success()
    }

    /// The device's counters, from its own line of `/proc/diskstats`.
    pub fn stats(&self) -> DiskStats {
        // Inside whole_machine_sync, nothing else counts; the shared hold
        // is taken at the first count after it.
        if !in_whole_machine_sync() {
            self.counting.get_or_init(quiet_disks);
        }
        let name = self.device.trim_start_matches("/dev/");
        let stats = fs::read_to_string("/proc/diskstats").expect("read /proc/diskstats");
        let fields: Vec<u64> = stats
            .lines()
            .map(|line| line.split_whitespace().collect::<Vec<_>>())
            .find(|fields| fields.get(2) == Some(&name))
            .unwrap_or_else(|| panic!("{name} is not in /proc/diskstats"))
            .iter()
            .skip(3)
            .map(|field| field.parse().unwrap_or(0))
            .collect();
        DiskStats {
            writes: fields.get(4).copied().unwrap_or(0),
            sectors_written: fields.get(6).copied().unwrap_or(0),
            flushes: *fields
                .get(15)
                .expect("a kernel that counts flushes (4.18+)"),
        }
    }

    pub fn flushes(&self) -> u64 {
        self.stats().flushes
    }

    /// The flushes the device completed while `run` ran, its pending
    /// journal commit written out first so that only the run's own count.
    pub fn flushes_during(&self, run: impl FnOnce()) -> u64 {
        self.flushes_during_inner(run)
    }

    /// [`LoopFs::flushes_during`] for a run that calls sync(2) itself (a
    /// control run of `sync_calls`): under [`whole_machine_sync`], so that
    /// no other test counts meanwhile. Before any other count of this
    /// file system: its shared hold would wait for itself.
    pub fn flushes_during_sync(&self, run: impl FnOnce()) -> u64 {
        whole_machine_sync(|| self.flushes_during_inner(run))
    }

    fn flushes_during_inner(&self, run: impl FnOnce()) -> u64 {
        let status = Command::new("sync")
            .arg("-f")
            .arg(&self.mount)
            .status()
            .expect("run sync");
        assert!(status.success());
        let before = self.flushes();
        run();
        self.flushes() - before
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        // Lazily, so that a process a failed test left behind cannot keep
        // the device: it is freed once the last user is gone.
        let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}
