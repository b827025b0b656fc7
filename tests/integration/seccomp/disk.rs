//! The disk's own count: a loop of fsyncs under the filter adds no
//! completed flush requests to a loop device's /proc/diskstats line, and
//! about 300 or more without it.

use super::{eatmydata, go_probe, static_probe};
use crate::loopfs::LoopFs;

#[test]
fn a_loop_of_fsyncs_under_seccomp_adds_no_disk_flushes() {
    const LOOPS: u64 = 300;
    let disk = LoopFs::new("seccomp-flush", 64);
    let file = disk.join("data");
    for program in [static_probe(), go_probe("static")] {
        let run = |mode: &str| {
            let before = disk.flushes();
            let args = [
                mode.as_ref(),
                program.as_os_str(),
                "loop".as_ref(),
                file.as_os_str(),
                "300".as_ref(),
            ];
            assert_eq!(eatmydata(&args).stdout().trim(), "synced 300");
            disk.flushes() - before
        };
        let control = run("--no-seccomp");
        assert!(
            control >= LOOPS * 9 / 10,
            "{}: only {control} flushes without the filter",
            program.display()
        );
        let filtered = run("--seccomp");
        // The journal commits only when asked (commit=600): not one flush.
        assert_eq!(
            filtered,
            0,
            "{}: flushes with the filter",
            program.display()
        );
    }
}
