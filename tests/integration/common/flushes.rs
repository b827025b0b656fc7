//! How every test judges a flush count: the run under eatmydata beside two
//! controls on the same kind of file system, never against exactly 0.
//!
//! - the **control**: the same run without eatmydata, whose syncs reach the
//!   disk;
//! - the **floor**: the same files written without syncing (the program
//!   under [`nosync`], or told not to sync), which measures what the file
//!   system flushes on its own: the journal's commits when it fills, a
//!   mount's or an unmount's.
//!
//! The run under eatmydata may flush as much as the floor, and a little
//! more that no run controls: on a busy machine any program's sync(2)
//! commits every journal with something in it, ours included (two flush
//! requests each: the pre-flush and the commit record), and the window
//! of a long run catches some. What it may not do is let the syncs
//! through: the control's own flushes, above its floor, must come to what
//! the test asks and at least twice that noise, which the judge checks
//! first so that no test can pass by measuring nothing.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::probe;
use crate::loopfs::LoopFs;

/// One journal commit on ext4: two flush requests.
pub const COMMIT: u64 = 2;

/// The commits a busy machine may add to a window on its own (other
/// programs' sync(2), which the tests' lock cannot hold back).
pub const NOISE: u64 = 2 * COMMIT;

/// The control's own flushes must be at least this many times the noise.
const MARGIN: u64 = 2;

/// The flush counts of one workload run three ways.
#[derive(Clone, Copy, Debug)]
pub struct Flushes {
    /// Without eatmydata: its syncs reach the disk.
    pub control: u64,
    /// The same files written without syncing: the file system's own.
    pub floor: u64,
    /// Under eatmydata.
    pub eaten: u64,
}

impl Flushes {
    /// The control's flushes that its syncs made: above the floor.
    pub fn synced(&self) -> u64 {
        self.control.saturating_sub(self.floor)
    }

    /// What the run under eatmydata may flush above the floor: a busy
    /// machine's few commits, and 5% of what the control's syncs made
    /// (a sync or two a program makes where no hook reaches, such as a
    /// container engine's own, which the tests of each door bound apart).
    pub fn allowance(&self) -> u64 {
        NOISE + self.synced() / 20
    }

    /// Asserts that the control's syncs made at least nine tenths of
    /// `at_least` flushes above the floor (two syncs may share a journal
    /// commit: 500 fsyncs once made 498 on a quiet machine), and twice
    /// [`NOISE`]; and that the run under
    /// eatmydata made no more than the floor and the allowance.
    /// `what` names the run in the messages, which show all three counts.
    pub fn assert_eaten(&self, at_least: u64, what: &str) {
        eprintln!(
            "flushes: {what}: control {}, floor {}, eaten {}",
            self.control, self.floor, self.eaten
        );
        let wanted = (at_least - at_least / 10).max(MARGIN * NOISE);
        assert!(
            self.synced() >= wanted,
            "{what}: the control's syncs made too few flushes to judge by: {self:?}, \
             at least {wanted} above the floor wanted"
        );
        assert!(
            self.eaten <= self.floor + self.allowance(),
            "{what}: {} flushes under eatmydata, more than the floor's {} and {} allowed \
             above it ({self:?})",
            self.eaten,
            self.floor,
            self.allowance()
        );
    }

    /// For a control whose calls flush nothing themselves (a
    /// `sync_file_range`, which starts writeback only): the run under
    /// eatmydata made no more than the floor and a busy machine's few.
    pub fn assert_at_floor(&self, what: &str) {
        eprintln!(
            "flushes: {what}: control {}, floor {}, eaten {}",
            self.control, self.floor, self.eaten
        );
        assert!(
            self.eaten <= self.floor + self.allowance(),
            "{what}: {} flushes under eatmydata, above the floor's {} ({self:?})",
            self.eaten,
            self.floor
        );
    }
}

/// `tests/integration/probes/nosync.c`, built static: `nosync PROGRAM
/// ARGS...` runs the program with its sync calls answered 0 by a seccomp
/// filter of its own, the floor's way to write the same files without
/// syncing. Static, so that it runs in any root (a bundle, an image).
pub fn nosync() -> PathBuf {
    probe("nosync", &["-static"])
}

/// [`nosync`] copied into `folder` (the root of a volume a container
/// mounts, say, where the host's path means nothing), executable by all;
/// copy it before counting, and name it as the container sees it.
pub fn nosync_into(folder: &Path) {
    let copy = folder.join("nosync");
    fs::copy(nosync(), &copy).expect("copy nosync");
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o755)).expect("chmod nosync");
}

/// The floor of a probe whose writes the test knows (io_uring and AIO
/// flushes, which no filter answers): `bytes` written to a new file `name`
/// of `disk` and closed, without a sync.
pub fn floor_writing(disk: &LoopFs, name: &str, bytes: usize) -> u64 {
    disk.flushes_during(|| {
        fs::write(disk.join(name), vec![0x5a; bytes]).expect("write the floor's file")
    })
}

#[cfg(test)]
mod tests {
    use super::Flushes;

    #[test]
    fn the_judge_takes_the_floor_and_a_few_commits_and_no_more() {
        let judged = |control, floor, eaten| {
            std::panic::catch_unwind(|| {
                Flushes {
                    control,
                    floor,
                    eaten,
                }
                .assert_eaten(50, "a case")
            })
            .is_ok()
        };
        assert!(judged(200, 0, 0));
        assert!(
            judged(200, 6, 8),
            "the floor's commits, and one from outside"
        );
        assert!(
            judged(200, 0, 4 + 10),
            "two commits and 5% of the control's"
        );
        assert!(!judged(200, 0, 15), "more than the allowance");
        assert!(!judged(200, 160, 0), "a control that barely synced");
        assert!(
            !judged(10, 0, 5),
            "six syncs, five flushes of them let through"
        );
        assert!(!judged(7, 0, 0), "too few to judge");
        assert!(judged(60, 10, 10), "the floor alone");
    }
}
