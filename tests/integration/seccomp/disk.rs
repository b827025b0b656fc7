//! The disk's own count: a loop of fsyncs under the filter adds no
//! completed flush requests to /proc/diskstats, and 300 without it.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::{eatmydata, go_probe, static_probe};
use crate::common::TempDir;

/// Completed flush requests of the disk holding `path` (/proc/diskstats,
/// field 16 of the statistics).
fn flushes(path: &Path) -> u64 {
    let dev = fs::metadata(path).unwrap().dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    // A partition's flushes are counted on its disk.
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let disk = match sys.join("partition").exists() {
        true => fs::read_to_string(sys.join("../dev"))
            .unwrap()
            .trim()
            .to_owned(),
        false => format!("{major}:{minor}"),
    };
    let stats = fs::read_to_string("/proc/diskstats").unwrap();
    let line = stats
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| format!("{}:{}", f[0], f[1]) == disk);
    let line =
        line.unwrap_or_else(|| panic!("{} is on no disk in /proc/diskstats", path.display()));
    line.get(18)
        .expect("a kernel that counts flushes (4.18+)")
        .parse()
        .unwrap()
}

#[test]
fn a_loop_of_fsyncs_under_seccomp_adds_no_disk_flushes() {
    const LOOPS: u64 = 300;
    let dir = TempDir::new("seccomp-flush");
    let file = dir.join("data");
    for program in [static_probe(), go_probe("static")] {
        let run = |mode: &str| {
            let before = flushes(dir.path());
            let args = [
                mode.as_ref(),
                program.as_os_str(),
                "loop".as_ref(),
                file.as_os_str(),
                "300".as_ref(),
            ];
            assert_eq!(eatmydata(&args).stdout().trim(), "synced 300");
            flushes(dir.path()) - before
        };
        let control = run("--no-seccomp");
        assert!(
            control >= LOOPS * 9 / 10,
            "{}: only {control} flushes without the filter",
            program.display()
        );
        // Other processes flush too, and can only add: a quiet try is proof.
        let filtered: Vec<u64> = (0..3).map(|_| run("--seccomp")).collect();
        assert!(
            filtered.iter().any(|&n| n < LOOPS / 10),
            "{}: flushes with the filter: {filtered:?}",
            program.display()
        );
    }
}
