//! Timing real flushes on a file system, for the report's estimate: what
//! one flush there takes. A scratch file in a folder of that file system
//! gets one page, committed once untimed (its block allocated, its size in
//! the journal), and then that page is rewritten and `fdatasync(2)`ed,
//! [`PER_ROUND`] times in each of [`ROUNDS`] rounds a little apart (a
//! machine's load comes and goes from one moment to the next: one burst of
//! samples catches one moment), and removed. A rewritten page costs its
//! data and one flush of the disk, nothing else: what every sync a program
//! makes costs at least, and what a database's log in place costs (a sync
//! that grows a file adds a journal commit, about one flush more). The
//! timing stops early, after a whole round, once it has taken [`BUDGET`],
//! on a disk slow enough for a few to tell. Each sample is the flush's
//! time less what this thread spent waiting for a CPU meanwhile
//! ([`run_delay`]): on a busy machine that wait, not the flush, made most
//! of a sample. What the samples say is a [`Spread`]: the typical flush
//! and the middle half of them.
//!
//! Where no folder of the file system is ours to write in (the runtime's
//! report, for a disk a container wrote to), the flushes are those of its
//! block device itself (`time_device`): opened read-only and `fsync(2)`ed,
//! which writes nothing and sends the disk one flush request.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::mounts::{self, Device, Mount};
use crate::real;

/// How many rounds of flushes are timed on each file system.
pub const ROUNDS: usize = 3;
/// How many flushes each round times, half of each kind.
pub const PER_ROUND: usize = 8;
/// The most flushes timed on each file system.
pub const SAMPLES: usize = ROUNDS * PER_ROUND;
/// The pause between two rounds.
const APART: Duration = Duration::from_millis(50);

/// The bytes each sample writes before its flush: one page, the least a
/// file system writes, as a program's small commit or log record does.
pub const SIZE: usize = 4096;

/// The time after which no more rounds are taken, once one is.
const BUDGET: Duration = Duration::from_secs(1);

/// Why no flush could be timed on a file system.
#[derive(Debug)]
pub enum Untimed {
    /// No folder of it is known here (not mounted in this mount namespace).
    NoFolder,
    /// No scratch file could be written and flushed in any of its folders.
    Failed(io::Error),
}

/// The folders where a scratch file on `device` may go, most likely
/// writable first: the current folder, the temporary folders and the home
/// folder when they are on it, then (with `mount_points`) its mount
/// points.
pub fn folders(mounts: &[Mount], device: Device, mount_points: bool) -> Vec<PathBuf> {
    let wanted: [Option<PathBuf>; 5] = [
        std::env::current_dir().ok(),
        std::env::var_os("TMPDIR").map(PathBuf::from),
        Some("/var/tmp".into()),
        Some("/tmp".into()),
        std::env::var_os("HOME").map(PathBuf::from),
    ];
    let points = mounts::points_of(mounts, device).into_iter().cloned();
    let points = points.filter(|_| mount_points);
    let mut found: Vec<PathBuf> = Vec::new();
    for folder in wanted.into_iter().flatten().chain(points) {
        let on_device = fs::metadata(&folder).is_ok_and(|meta| {
            meta.is_dir() && (libc::major(meta.dev()), libc::minor(meta.dev())) == device
        });
        if on_device && !found.contains(&folder) {
            found.push(folder);
        }
    }
    found
}

/// The flushes timed in the first of `folders` that takes a scratch file.
pub fn time_flushes(folders: &[PathBuf]) -> Result<Vec<Duration>, Untimed> {
    let mut failure = Untimed::NoFolder;
    for folder in folders {
        match time_in(folder) {
            Ok(samples) => return Ok(samples),
            Err(error) => failure = Untimed::Failed(error),
        }
    }
    Err(failure)
}

/// A scratch file in a folder, removed when dropped, whatever happened.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

fn time_in(folder: &Path) -> io::Result<Vec<Duration>> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let name = format!(".eatmydata-flush-{}-{nanos}", std::process::id());
    let scratch = Scratch(folder.join(name));
    let mut file: File = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&scratch.0)?;
    let page = [b'e'; SIZE];
    // Allocated and committed before any timing: what follows rewrites.
    file.write_all(&page)?;
    real::fsync(file.as_raw_fd())?;
    let samples = rounds(|| {
        file.write_all_at(&page, 0)?;
        real::fdatasync(file.as_raw_fd())
    })?;
    drop(file);
    drop(scratch);
    Ok(samples)
}

/// The flushes of `device`'s own block device: opened read-only (nothing
/// is written) and `fsync(2)`ed, one flush request each. For a file
/// system mounted here (`mounted`), where no folder of it is ours.
pub fn time_device(device: Device, mounted: bool) -> Result<Vec<Duration>, Untimed> {
    if !mounted {
        return Err(Untimed::NoFolder);
    }
    let node = block_node(device).ok_or(Untimed::NoFolder)?;
    let disk = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&node)
        .map_err(Untimed::Failed)?;
    let meta = disk.metadata().map_err(Untimed::Failed)?;
    let named = (libc::major(meta.rdev()), libc::minor(meta.rdev()));
    if !meta.file_type().is_block_device() || named != device {
        return Err(Untimed::NoFolder);
    }
    rounds(|| real::fsync(disk.as_raw_fd())).map_err(Untimed::Failed)
}

/// `/dev/NAME` of a block device, from its `DEVNAME` in sysfs; `None`
/// when the device is not a block device (tmpfs, overlay: `0:N`).
fn block_node((major, minor): Device) -> Option<PathBuf> {
    let uevent = fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/uevent")).ok()?;
    let name = uevent
        .lines()
        .find_map(|line| line.strip_prefix("DEVNAME="))?;
    // A name, never a path that leaves /dev.
    let plain = !name.is_empty() && !name.split('/').any(|part| part.is_empty() || part == "..");
    plain.then(|| Path::new("/dev").join(name))
}

/// [`SAMPLES`] timings of `flush` at most, in rounds, each less the
/// time this thread waited for a CPU meanwhile.
fn rounds(mut flush: impl FnMut() -> io::Result<()>) -> io::Result<Vec<Duration>> {
    let start = Instant::now();
    let mut samples = Vec::with_capacity(SAMPLES);
    for round in 0..ROUNDS {
        if round > 0 {
            if start.elapsed() >= BUDGET {
                break;
            }
            std::thread::sleep(APART);
        }
        for _ in 0..PER_ROUND {
            let waited = run_delay();
            let sample = Instant::now();
            flush()?;
            let took = sample.elapsed();
            let waited = run_delay().saturating_sub(waited);
            samples.push(took.saturating_sub(waited));
        }
    }
    Ok(samples)
}

/// How long this thread has waited for a CPU, runnable, since it began:
/// the second figure of `/proc/thread-self/schedstat` (nanoseconds), zero
/// where the kernel does not say. Taken off each sample: on a busy machine
/// the thread whose flush completed waits its turn for a CPU before it
/// reads the clock, and that wait is the machine's load, not the disk's
/// flush (beside `stress-ng --cpu 4` on 2 cores, samples of 7 to 8 ms held
/// 4 to 5.5 ms of it, and estimates read up to 30 times what a container's
/// own back-to-back flushes had taken seconds before).
fn run_delay() -> Duration {
    fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|text| waited_for_cpu(&text))
        .unwrap_or_default()
}

/// The run-queue wait in a `schedstat` line (`RUN WAITED SLICES`).
fn waited_for_cpu(schedstat: &str) -> Option<Duration> {
    let nanos = schedstat.split_ascii_whitespace().nth(1)?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// What the samples say a flush takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// Their mean less the slowest eighth: what a run of flushes costs
    /// each (a median says less: a disk whose flushes now and then wait
    /// for a journal commit or a busy CPU costs a program those waits
    /// too, 2.9 ms a call against a median of 1.9 ms on a 1.6 ms device),
    /// and which one flush that waited for something else (the first,
    /// which commits what the command left in the journal; another
    /// program's burst) does not move.
    pub typical: Duration,
    /// The middle half of the samples, from the first quartile to the
    /// third, widened to hold `typical`.
    pub low: Duration,
    pub high: Duration,
    /// How many flushes were timed.
    pub timed: usize,
}

/// The spread of `samples`; `None` when there are none.
pub fn spread(samples: &[Duration]) -> Option<Spread> {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let kept = sorted.get(..sorted.len() - sorted.len() / 8)?;
    let typical = kept
        .iter()
        .sum::<Duration>()
        .checked_div(kept.len() as u32)?;
    // Quartiles by rank, as many samples below the first as above the third.
    let last = sorted.len() - 1;
    let (first, third) = (sorted[last / 4], sorted[(3 * last).div_ceil(4)]);
    Some(Spread {
        typical,
        low: first.min(typical),
        high: third.max(typical),
        timed: samples.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_for_a_cpu_is_read_from_schedstat() {
        assert_eq!(
            waited_for_cpu("2066743 120825 17\n"),
            Some(Duration::from_nanos(120825))
        );
        assert_eq!(waited_for_cpu(""), None);
        assert_eq!(waited_for_cpu("12 x 3"), None);
        // This thread's own, when the kernel keeps it.
        if Path::new("/proc/thread-self/schedstat").exists() {
            let before = run_delay();
            std::thread::yield_now();
            assert!(run_delay() >= before);
        }
    }

    #[test]
    fn the_typical_flush_is_a_trimmed_mean_and_the_spread_the_middle_half() {
        let ms = Duration::from_millis;
        assert_eq!(spread(&[]), None);
        let one = spread(&[ms(2)]).unwrap();
        assert_eq!(
            (one.low, one.typical, one.high, one.timed),
            (ms(2), ms(2), ms(2), 1)
        );
        // 1..=8 ms: the slowest (8) left out, the mean of 1..=7 is 4;
        // quartiles by rank 2 and 7.
        let samples: Vec<Duration> = (1..=8).map(ms).collect();
        let said = spread(&samples).unwrap();
        assert_eq!(said.typical, ms(4));
        assert_eq!((said.low, said.high, said.timed), (ms(2), ms(7), 8));
        // Slow bursts up to an eighth of the samples (the first flush,
        // say, which commits what the command left in the journal) move
        // nothing.
        let mut burst = vec![ms(1); 24];
        burst[0] = ms(900);
        burst[3] = ms(900);
        burst[9] = ms(900);
        let said = spread(&burst).unwrap();
        assert_eq!((said.low, said.typical, said.high), (ms(1), ms(1), ms(1)));
        // What waits now and then is counted: a third of the flushes at
        // 4 ms, the rest at 1 ms, make 2 ms each.
        let mixed: Vec<Duration> = (0..24)
            .map(|n| ms(if n % 3 == 0 { 4 } else { 1 }))
            .collect();
        let said = spread(&mixed).unwrap();
        assert!(said.typical > ms(1) && said.typical < ms(4), "{said:?}");
    }

    #[test]
    fn a_block_device_is_named_from_sysfs_and_never_outside_dev() {
        // The machine's first loop device or its root disk, whichever sysfs has.
        let root = fs::metadata("/").unwrap();
        let root = (libc::major(root.dev()), libc::minor(root.dev()));
        if let Some(node) = block_node(root) {
            assert!(node.starts_with("/dev/"), "{node:?}");
        }
        // tmpfs and the like have no block device.
        let shm = fs::metadata("/dev/shm").unwrap();
        assert_eq!(
            block_node((libc::major(shm.dev()), libc::minor(shm.dev()))),
            None
        );
        assert!(matches!(time_device((0, 0), true), Err(Untimed::NoFolder)));
        assert!(matches!(time_device(root, false), Err(Untimed::NoFolder)));
    }

    #[test]
    fn flushes_are_timed_in_a_folder_of_the_file_system_and_leave_nothing() {
        let folder = std::env::temp_dir().join(format!("eatmydata-timing-{}", std::process::id()));
        fs::create_dir_all(&folder).unwrap();
        let meta = fs::metadata(&folder).unwrap();
        let device = (libc::major(meta.dev()), libc::minor(meta.dev()));
        let text = fs::read_to_string("/proc/self/mountinfo").unwrap();
        let found = folders(&mounts::parse(&text), device, true);
        assert!(!found.is_empty(), "no folder on {device:?}");
        // A file system of none of our own folders (/dev/shm): its mount
        // point, only when mount points may be used.
        let shm = fs::metadata("/dev/shm").unwrap();
        let shm = (libc::major(shm.dev()), libc::minor(shm.dev()));
        let mounts = mounts::parse(&text);
        let points = folders(&mounts, shm, true);
        assert_eq!(points, [PathBuf::from("/dev/shm")]);
        assert!(folders(&mounts, shm, false).is_empty());
        let samples = time_flushes(std::slice::from_ref(&folder)).unwrap();
        assert!(
            (PER_ROUND..=SAMPLES).contains(&samples.len()),
            "{samples:?}"
        );
        assert_eq!(samples.len() % PER_ROUND, 0, "whole rounds: {samples:?}");
        assert_eq!(
            fs::read_dir(&folder).unwrap().count(),
            0,
            "the scratch file stays"
        );
        fs::remove_dir(&folder).unwrap();
        // A folder that takes no file: the error, and nothing timed.
        match time_flushes(&[folder.join("gone")]) {
            Err(Untimed::Failed(error)) => assert_eq!(error.kind(), io::ErrorKind::NotFound),
            other => panic!("{other:?}"),
        }
        assert!(matches!(time_flushes(&[]), Err(Untimed::NoFolder)));
    }
}
