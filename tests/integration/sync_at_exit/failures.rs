//! What cannot be flushed: a file system whose writeback fails, one gone
//! before the flush. Reported, the others flushed, the status kept or 125.

use std::process::Command;

use super::{eatmydata_sh, marker, whole_machine_sync, write_synced};
use crate::common::{TempDir, library};
use crate::loopfs::LoopFs;

#[test]
fn a_failing_file_system_is_reported_the_others_flushed_and_the_status_is_125() {
    library();
    let good = LoopFs::new("atexit-good", 32);
    // The bad one's image lies on a tmpfs too small for it: writeback fails.
    let scratch = TempDir::new("atexit-bad");
    let small = scratch.join("small");
    std::fs::create_dir(&small).unwrap();
    let tmpfs = Tmpfs::mount(&small, "16m");
    let bad = LoopFs::with_image(TempDir::new("atexit-bad-mnt"), small.join("image"), 64);
    let text = marker("beside-a-failure");
    let script = format!(
        "{}; dd if=/dev/zero of='{}' bs=1M count=24 conv=fsync status=none",
        write_synced(&text, &good.join("m")),
        bad.join("big").display()
    );
    let run = eatmydata_sh(&["--sync-at-exit"], &script);
    assert_eq!(run.output.status.code(), Some(125), "{}", run.stderr());
    let said = format!(
        "eatmydata: sync-at-exit: cannot flush {} (",
        bad.path().display()
    );
    assert!(run.stderr().starts_with(&said), "{}", run.stderr());
    assert!(run.stderr().contains("(errno "), "{}", run.stderr());
    assert!(good.holds(&text), "the good file system was flushed");

    // A failing command's own status wins over the failed flush.
    let failing = eatmydata_sh(
        &["--sync-at-exit"],
        &format!(
            "dd if=/dev/zero of='{}' bs=1M count=24 conv=fsync status=none; exit 3",
            bad.join("more").display()
        ),
    );
    assert_eq!(
        failing.output.status.code(),
        Some(3),
        "{}",
        failing.stderr()
    );
    drop(bad);
    drop(tmpfs);
}

/// A tmpfs of a given size, unmounted when dropped.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(at: &std::path::Path, size: &str) -> Tmpfs {
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .expect("run mount");
        assert!(status.success(), "mount a tmpfs");
        Tmpfs(at.to_owned())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_file_system_gone_before_the_flush_falls_back_to_sync() {
    let fs = LoopFs::new("atexit-gone", 32);
    let text = marker("gone");
    let path = fs.path().display().to_string();
    let write = write_synced(&text, &fs.join("m"));
    // The control: mounted at the end, the file system is named.
    let named = whole_machine_sync(|| eatmydata_sh(&["--sync-at-exit", "-v"], &write).success());
    let said = format!("flushed 1 file system ({path}) in ");
    assert!(named.stderr().contains(&said), "{}", named.stderr());
    // Unmounted by the command (which writes it out), it is nowhere to be
    // found: sync(2) stands in, and the command's status is kept.
    let script = format!("{write} && umount '{path}'");
    let gone = whole_machine_sync(|| eatmydata_sh(&["--sync-at-exit", "-v"], &script).success());
    assert!(
        gone.stderr().contains(
            "flushed 0 file systems and ran sync(2) for a file system without a mount point here"
        ),
        "{}",
        gone.stderr()
    );
    assert!(fs.holds(&text));
}

#[test]
fn a_list_removed_by_the_command_falls_back_to_sync() {
    let fs = LoopFs::new("atexit-lost", 32);
    let text = marker("lost");
    // A command that cleans the temporary folder takes the list with it.
    let script = format!(
        "rm -f \"$EATMYDATA_FLUSH_LIST\"; {}",
        write_synced(&text, &fs.join("m"))
    );
    let run = whole_machine_sync(|| eatmydata_sh(&["--sync-at-exit", "-v"], &script).success());
    assert!(
        run.stderr()
            .contains("and ran sync(2), since the list of file systems was removed before the end"),
        "{}",
        run.stderr()
    );
    assert!(
        fs.holds(&text),
        "sync(2) flushed what could not be recorded"
    );
}
