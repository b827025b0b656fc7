//! Timing real flushes on a file system, for the report's estimate: a
//! scratch file in a folder of that file system is flushed after a write
//! of [`SIZE`] bytes, [`PER_ROUND`] times in each of [`ROUNDS`] rounds a
//! little apart (a machine's load comes and goes from one moment to the
//! next: one burst of samples catches one moment), and removed. Programs
//! flush in two ways, and the samples take turns: a page appended and
//! `fsync(2)`ed (the file grows: its data and a journal commit, as a new
//! file or a log record costs), and a page rewritten in place and
//! `fdatasync(2)`ed (its data alone, as a database's page or a reused log
//! costs). Each sample costs what it times, one flush; the timing stops
//! early, after a whole round, once it has taken [`BUDGET`], on a disk slow
//! enough for a few to tell. Each sample is the flush's time less what
//! this thread spent waiting for a CPU meanwhile ([`run_delay`]): on a
//! busy machine that wait, not the flush, made most of a sample. What
//! the samples say is a [`Spread`]: the typical flush and the middle half
//! of them.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
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
    let start = Instant::now();
    let mut samples = Vec::with_capacity(SAMPLES);
    for round in 0..ROUNDS {
        if round > 0 {
            if start.elapsed() >= BUDGET {
                break;
            }
            std::thread::sleep(APART);
        }
        for turn in 0..PER_ROUND {
            let waited = run_delay();
            let sample = Instant::now();
            if turn.is_multiple_of(2) {
                file.write_all(&page)?;
                real::fsync(file.as_raw_fd())?;
            } else {
                file.write_all_at(&page, 0)?;
                real::fdatasync(file.as_raw_fd())?;
            }
            let took = sample.elapsed();
            let waited = run_delay().saturating_sub(waited);
            samples.push(took.saturating_sub(waited));
        }
    }
    drop(file);
    drop(scratch);
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

/// What the samples as taken (the kinds in turn) say a flush takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// The mean of the two kinds' medians, which a flush that waited for
    /// something else (the first, which commits what the command left in
    /// the journal; another program's burst) does not move.
    pub typical: Duration,
    /// The middle half of all the samples, from the first quartile to the
    /// third, widened to hold `typical`.
    pub low: Duration,
    pub high: Duration,
    /// How many flushes were timed.
    pub timed: usize,
}

/// The spread of `samples`; `None` when there are none.
pub fn spread(samples: &[Duration]) -> Option<Spread> {
    let typical = typical(samples)?;
    let mut sorted = samples.to_vec();
    sorted.sort();
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

/// What one flush takes, from the samples as taken (the kinds in turn):
/// the mean of the two kinds' medians.
pub fn typical(samples: &[Duration]) -> Option<Duration> {
    let kind = |first| samples.iter().skip(first).step_by(2).copied().collect();
    match (median(kind(0)), median(kind(1))) {
        (Some(grown), Some(rewritten)) => Some((grown + rewritten) / 2),
        (one, None) => one,
        (None, other) => other,
    }
}

fn median(mut samples: Vec<Duration>) -> Option<Duration> {
    samples.sort();
    let middle = samples.len() / 2;
    match samples.len() {
        0 => None,
        n if !n.is_multiple_of(2) => samples.get(middle).copied(),
        _ => Some((samples[middle - 1] + samples[middle]) / 2),
    }
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
    fn the_typical_flush_is_the_mean_of_each_kinds_median() {
        let ms = Duration::from_millis;
        assert_eq!(typical(&[]), None);
        assert_eq!(typical(&[ms(2)]), Some(ms(2)));
        assert_eq!(typical(&[ms(2), ms(4)]), Some(ms(3)));
        // Grown: 40, 2, 0, 6 (median 4); rewritten: 1, 3, 1, 90 (median 2).
        let samples = [ms(40), ms(1), ms(2), ms(3), ms(0), ms(1), ms(6), ms(90)];
        assert_eq!(typical(&samples), Some(ms(3)));
    }

    #[test]
    fn the_spread_is_the_middle_half_holding_the_typical_flush() {
        let ms = Duration::from_millis;
        assert_eq!(spread(&[]), None);
        let one = spread(&[ms(2)]).unwrap();
        assert_eq!(
            (one.low, one.typical, one.high, one.timed),
            (ms(2), ms(2), ms(2), 1)
        );
        // 1..=8 ms in turns: grown 1, 3, 5, 7 (median 4); rewritten 2, 4,
        // 6, 8 (median 5): typical 4.5; quartiles by rank 2 and 7.
        let samples: Vec<Duration> = (1..=8).map(ms).collect();
        let said = spread(&samples).unwrap();
        assert_eq!(said.typical, Duration::from_micros(4500));
        assert_eq!((said.low, said.high, said.timed), (ms(2), ms(7), 8));
        // One slow burst moves neither end much; the range holds the
        // typical flush even when the kinds differ widely.
        let mut burst = vec![ms(1); 24];
        burst[3] = ms(900);
        let said = spread(&burst).unwrap();
        assert_eq!((said.low, said.typical, said.high), (ms(1), ms(1), ms(1)));
        let kinds: Vec<Duration> = (0..8)
            .map(|n| if n % 2 == 0 { ms(10) } else { ms(1) })
            .collect();
        let said = spread(&kinds).unwrap();
        assert_eq!(said.typical, Duration::from_micros(5500));
        assert!(
            said.low <= said.typical && said.typical <= said.high,
            "{said:?}"
        );
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
