//! The disk's own count: a loop of fsyncs under the filter adds no more
//! completed flush requests to a loop device's /proc/diskstats line than
//! the same writes without a sync (`common::flushes`), and about 300 or
//! more without it.

use super::{eatmydata, go_probe, static_probe};
use crate::common::{Flushes, Run, nosync};
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
        let floor = disk.flushes_during(|| {
            let floor = Run::new(nosync()).arg(&program).arg("loop").arg(&file);
            assert_eq!(
                floor.arg("300").run().success().stdout().trim(),
                "synced 300"
            );
        });
        let filtered = run("--seccomp");
        Flushes {
            control,
            floor,
            eaten: filtered,
        }
        .assert_eaten(LOOPS * 9 / 10, &program.display().to_string());
    }
}
