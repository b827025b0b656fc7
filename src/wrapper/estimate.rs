//! The end of `--report`: what the skipped flushes would have cost, on each
//! file system where some were skipped, as an estimate. Once the command
//! has ended, a few rounds of real flushes are timed there (`timing.rs`:
//! a rewritten page fdatasynced in a folder there, or the disk's own flush
//! where no folder is ours), and the middle half of what they took, times
//! the flushes skipped there, is the time saved, said as a range:
//!
//! ```text
//! eatmydata: skipped 7,478 flushes on /srv (ext4 on vda); a flush there takes about 0.9 to 1.6 ms now: about 6.7 to 12 s saved
//! ```
//!
//! A range, not a point: on a busy machine one flush takes ten times
//! another a second later, and a point taken twice would say two things.
//! A program's own flush carries what it wrote since its last one, and a
//! journal commit when it grew a file: each skipped sync is counted at one
//! flush, what a database's log rewritten in place costs (checked on a
//! device whose flushes take a known time, tests/integration/report/
//! latency.rs). The line says "about", and the note under it how the
//! figure was made. Where no flush can be timed (no folder of ours and no
//! block device mounted here), the count is said without an estimate.

mod timing;

pub use timing::Spread;

use std::fmt::Write as _;
use std::time::Duration;

use crate::mounts::{self, Device, Mount};
use crate::report::Flushes;

/// One file system where flushes were skipped, with what a flush there
/// takes now, or why that is not known.
pub struct Timed {
    pub count: u64,
    place: Place,
    flush: Result<Spread, timing::Untimed>,
}

impl Timed {
    /// What flushes there take now, when they could be timed.
    pub fn spread(&self) -> Option<Spread> {
        self.flush.as_ref().ok().copied()
    }

    /// What the `count` flushes would have taken, when flushes were
    /// timed: the typical flush's, and the range.
    pub fn saved(&self) -> Option<Saved> {
        self.spread().map(|spread| Saved::of(&spread, self.count))
    }

    /// Its line in a report, after `eatmydata: `.
    pub fn line(&self) -> String {
        line(self.count, &self.place, self.flush.as_ref().copied())
    }

    /// How the file system is named: its mount point and `(TYPE on DEVICE)`.
    pub fn name(&self) -> &str {
        &self.place.name
    }
}

/// Times a few flushes on each file system of `flushes` where any were
/// skipped.
pub fn time(flushes: &Flushes) -> Vec<Timed> {
    time_with(flushes, true)
}

/// [`time`], with scratch files only in this process's own and temporary
/// folders (its current folder, `TMPDIR`, `/var/tmp`, `/tmp`, `HOME`),
/// never at a mount point: for counts others wrote (the runtime's
/// account, whose devices a container names), so that no file system it
/// was not asked about is written or flushed. A file system with none of
/// those folders is counted without an estimate.
pub fn time_in_own_folders(flushes: &Flushes) -> Vec<Timed> {
    time_with(flushes, false)
}

fn time_with(flushes: &Flushes, mount_points: bool) -> Vec<Timed> {
    let mounts =
        mounts::parse(&std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default());
    flushes
        .on
        .iter()
        .filter(|(_, count)| **count > 0)
        .map(|(&device, &count)| Timed {
            count,
            place: Place::of(&mounts, device),
            flush: time_on(&mounts, device, mount_points)
                .and_then(|samples| timing::spread(&samples).ok_or(timing::Untimed::NoFolder)),
        })
        .collect()
}

/// Flushes timed in a folder of `device`'s file system; where none is
/// ours, on its block device when it is mounted here (the disk a
/// container's writes went to, without a folder of ours on it).
fn time_on(
    mounts: &[Mount],
    device: Device,
    mount_points: bool,
) -> Result<Vec<Duration>, timing::Untimed> {
    match timing::time_flushes(&timing::folders(mounts, device, mount_points)) {
        Err(timing::Untimed::NoFolder) => {
            timing::time_device(device, mounts::find(mounts, device).is_some())
        }
        timed => timed,
    }
}

/// How `device` is named where this process is: `/mnt (ext4 on loop3)`,
/// or `None` when it is not mounted here.
pub fn name(mounts: &[Mount], device: Device) -> Option<String> {
    mounts::find(mounts, device).map(|_| Place::of(mounts, device).name)
}

/// The note under an estimate: how it was made.
pub fn how() -> String {
    format!(
        "An estimate: up to {} flushes timed on each file system just now, in {} rounds, at the cost of one flush each (a {} KiB page of a scratch file rewritten and fdatasynced, or where no folder there is ours, the disk's own flush), less the time the timing waited for a CPU; their mean less the slowest eighth, and the middle half of them, times the count, are the figure and the range. Each skipped sync is counted at one flush: one that grew a file also cost a journal commit, about one flush more, and the machine's load changes.",
        timing::SAMPLES,
        timing::ROUNDS,
        timing::SIZE / 1024,
    )
}

/// The lines that end the report, with the flushes timed now on each file
/// system of `flushes`; nothing when no flush was skipped.
pub fn tell(flushes: &Flushes) -> String {
    let mut out = String::new();
    let timed = time(flushes);
    let estimated: Vec<Saved> = timed.iter().filter_map(Timed::saved).collect();
    for one in &timed {
        out.push_str(&one.line());
    }
    if estimated.len() > 1 {
        let total = Saved::sum(&estimated);
        let _ = writeln!(out, "eatmydata: about {} saved in all", total.words());
    }
    if flushes.unnamed > 0 {
        let _ = writeln!(
            out,
            "eatmydata: skipped {} where no file system could be named (sync(), an msync of an unknown range): not estimated",
            flushes_word(flushes.unnamed),
        );
    }
    if !estimated.is_empty() {
        let _ = writeln!(out, "  {}", how());
    }
    out
}

/// How a file system is named in the report.
#[derive(Debug, PartialEq)]
struct Place {
    /// Its mount point and `(TYPE on DEVICE)`, or `device MAJOR:MINOR`.
    name: String,
    /// Why a flush there costs next to nothing, when the mount says so.
    free: Option<&'static str>,
}

impl Place {
    fn of(mounts: &[Mount], device: Device) -> Place {
        let Some(mount) = mounts::find(mounts, device) else {
            return Place {
                name: format!("device {} (not mounted here)", mounts::device_name(device)),
                free: None,
            };
        };
        let kind = match mount.source.strip_prefix("/dev/") {
            Some(disk) => format!("{} on {disk}", mount.fstype),
            None => mount.fstype.clone(),
        };
        let options: Vec<&str> = mount.options.split(',').collect();
        let free = if ["tmpfs", "ramfs"].contains(&&*mount.fstype) {
            Some("it keeps its files in memory")
        } else if options
            .iter()
            .any(|o| ["nobarrier", "barrier=0"].contains(o))
        {
            Some("its barriers are off: no flush reaches the disk's cache")
        } else {
            None
        };
        Place {
            name: format!("{} ({kind})", mount.point.display()),
            free,
        }
    }
}

/// A flush there, as timed, is below this: nearly free.
const NEARLY_FREE: Duration = Duration::from_micros(50);

/// The line of one file system: `count` flushes skipped at `place`, and
/// what a flush there takes, or why that is not known.
fn line(count: u64, place: &Place, flush: Result<Spread, &timing::Untimed>) -> String {
    let skipped = format!(
        "eatmydata: skipped {} on {}",
        flushes_word(count),
        place.name
    );
    let flush = match flush {
        Ok(flush) => flush,
        Err(timing::Untimed::NoFolder) => return format!("{skipped}: not estimated\n"),
        Err(timing::Untimed::Failed(error)) => {
            return format!(
                "{skipped}: not estimated, no scratch file could be flushed there ({})\n",
                crate::error::plain(error)
            );
        }
    };
    let why = match (place.free, flush.typical < NEARLY_FREE) {
        (Some(why), _) => format!(" ({why}: a flush there is nearly free)"),
        (None, true) => " (a flush there is nearly free)".to_owned(),
        (None, false) => String::new(),
    };
    format!(
        "{skipped}; a flush there takes about {} now: about {} saved{why}\n",
        range(flush.low, flush.high),
        Saved::of(&flush, count).words(),
    )
}

/// What skipped flushes would have taken: `count` times the typical
/// flush, and the range of the middle half.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Saved {
    pub typical: Duration,
    pub low: Duration,
    pub high: Duration,
}

impl Saved {
    fn of(spread: &Spread, count: u64) -> Saved {
        Saved {
            typical: saved(spread.typical, count),
            low: saved(spread.low, count),
            high: saved(spread.high, count),
        }
    }

    /// The sum over file systems.
    pub fn sum(all: &[Saved]) -> Saved {
        Saved {
            typical: all.iter().map(|s| s.typical).sum(),
            low: all.iter().map(|s| s.low).sum(),
            high: all.iter().map(|s| s.high).sum(),
        }
    }

    /// `6.7 to 12 s`, or one figure when both ends read the same.
    pub fn words(&self) -> String {
        range(self.low, self.high)
    }
}

/// `0.9 to 1.6 ms`, `6.7 to 12 s` (the low end in the high end's unit),
/// `20 µs to 3.1 ms` (where that would read 0.0), or `1.3 ms` when both
/// read alike.
pub fn range(low: Duration, high: Duration) -> String {
    let said = duration(high);
    if duration(low) == said {
        return said;
    }
    let unit = said.rsplit(' ').next().unwrap_or_default();
    let scale = match unit {
        "µs" => 1e-6,
        "ms" => 1e-3,
        "min" => 60.0,
        "h" => 3600.0,
        _ => 1.0,
    };
    let value = low.as_secs_f64() / scale;
    if value < 0.05 {
        return format!("{} to {said}", duration(low));
    }
    let number = if value < 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.0}")
    };
    format!("{number} to {said}")
}

/// What `count` flushes of `flush` each come to.
fn saved(flush: Duration, count: u64) -> Duration {
    Duration::try_from_secs_f64(flush.as_secs_f64() * count as f64).unwrap_or(Duration::MAX)
}

/// `1 flush`, `7,478 flushes`.
pub fn flushes_word(count: u64) -> String {
    format!(
        "{} flush{}",
        grouped(count),
        if count == 1 { "" } else { "es" }
    )
}

/// A count as every report writes it: `7,478`, `1,234,567`.
pub fn grouped(count: u64) -> String {
    let digits = count.to_string();
    let mut grouped = String::new();
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

/// A duration as a person says it: `45 µs`, `1.3 ms`, `240 ms`, `9.7 s`,
/// `42 s`, `12 min`, `1.5 h`.
pub fn duration(time: Duration) -> String {
    let seconds = time.as_secs_f64();
    match seconds {
        s if s < 0.001 => format!("{} µs", time.as_micros().max(1)),
        s if s < 0.01 => format!("{:.1} ms", s * 1e3),
        s if s < 1.0 => format!("{:.0} ms", s * 1e3),
        s if s < 10.0 => format!("{s:.1} s"),
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 6000.0 => format!("{:.0} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    fn point(flush: Duration) -> Spread {
        Spread {
            typical: flush,
            low: flush,
            high: flush,
            timed: 24,
        }
    }

    fn place(name: &str) -> Place {
        Place {
            name: name.to_owned(),
            free: None,
        }
    }

    #[test]
    fn the_line_says_the_count_the_flush_and_the_time_saved() {
        let srv = place("/srv (ext4 on vda)");
        let spread = Spread {
            typical: Duration::from_micros(1300),
            low: Duration::from_micros(900),
            high: Duration::from_micros(1600),
            timed: 24,
        };
        assert_eq!(
            line(7478, &srv, Ok(spread)),
            "eatmydata: skipped 7,478 flushes on /srv (ext4 on vda); a flush there takes about 0.9 to 1.6 ms now: about 6.7 to 12 s saved\n"
        );
        assert_eq!(
            line(7478, &srv, Ok(point(Duration::from_micros(1300)))),
            "eatmydata: skipped 7,478 flushes on /srv (ext4 on vda); a flush there takes about 1.3 ms now: about 9.7 s saved\n"
        );
        assert_eq!(
            line(1, &srv, Ok(point(Duration::from_micros(20)))),
            "eatmydata: skipped 1 flush on /srv (ext4 on vda); a flush there takes about 20 µs now: about 20 µs saved (a flush there is nearly free)\n"
        );
        let refused = timing::Untimed::Failed(io::Error::from_raw_os_error(libc::EROFS));
        assert_eq!(
            line(12, &srv, Err(&refused)),
            "eatmydata: skipped 12 flushes on /srv (ext4 on vda): not estimated, no scratch file could be flushed there (Read-only file system)\n"
        );
        let away = place("device 0:45 (not mounted here)");
        assert_eq!(
            line(3, &away, Err(&timing::Untimed::NoFolder)),
            "eatmydata: skipped 3 flushes on device 0:45 (not mounted here): not estimated\n"
        );
    }

    #[test]
    fn tmpfs_and_barriers_off_are_said_to_be_nearly_free() {
        let mounts = mounts::parse(
            "\
1 0 0:30 / /dev/shm rw - tmpfs tmpfs rw,size=65536k
2 0 7:1 / /fast rw - ext4 /dev/loop1 rw,barrier=0
3 0 7:2 / /slow rw - ext4 /dev/loop2 rw
",
        );
        let shm = Place::of(&mounts, (0, 30));
        assert_eq!(shm.name, "/dev/shm (tmpfs)");
        let said = line(300, &shm, Ok(point(Duration::from_micros(4))));
        assert!(
            said.ends_with(
                "about 1.2 ms saved (it keeps its files in memory: a flush there is nearly free)\n"
            ),
            "{said}"
        );
        let fast = Place::of(&mounts, (7, 1));
        assert_eq!(fast.name, "/fast (ext4 on loop1)");
        assert!(fast.free.unwrap().contains("barriers are off"));
        assert_eq!(Place::of(&mounts, (7, 2)).free, None);
        assert_eq!(
            Place::of(&mounts, (8, 0)).name,
            "device 8:0 (not mounted here)"
        );
    }

    #[test]
    fn counts_and_durations_read_as_a_person_says_them() {
        assert_eq!(flushes_word(0), "0 flushes");
        assert_eq!(flushes_word(999), "999 flushes");
        assert_eq!(flushes_word(1000), "1,000 flushes");
        assert_eq!(flushes_word(1234567), "1,234,567 flushes");
        let said: Vec<String> = [0, 45, 1_300, 240_000, 9_700_000, 42_000_000, 720_000_000]
            .into_iter()
            .map(|us| duration(Duration::from_micros(us)))
            .collect();
        assert_eq!(
            said,
            [
                "1 µs", "45 µs", "1.3 ms", "240 ms", "9.7 s", "42 s", "12 min"
            ]
        );
        assert_eq!(duration(Duration::from_secs(5400)), "90 min");
        assert_eq!(duration(Duration::from_secs(9000)), "2.5 h");
    }

    #[test]
    fn ranges_read_as_one_unit_where_they_can() {
        let us = Duration::from_micros;
        assert_eq!(range(us(900), us(1600)), "0.9 to 1.6 ms");
        assert_eq!(range(us(800), us(1200)), "0.8 to 1.2 ms");
        assert_eq!(range(us(20), us(3100)), "20 µs to 3.1 ms");
        assert_eq!(range(us(300_000), us(12_000_000)), "0.3 to 12 s");
        assert_eq!(range(us(1300), us(1310)), "1.3 ms");
        let saved = Saved::sum(&[
            Saved::of(&point(us(1000)), 1000),
            Saved::of(
                &Spread {
                    typical: us(2000),
                    low: us(1000),
                    high: us(3000),
                    timed: 8,
                },
                1000,
            ),
        ]);
        assert_eq!(saved.words(), "2.0 to 4.0 s");
        assert_eq!(saved.typical, Duration::from_secs(3));
    }

    #[test]
    fn nothing_skipped_says_nothing() {
        assert_eq!(tell(&Flushes::default()), "");
        let unnamed = tell(&Flushes {
            on: Default::default(),
            unnamed: 2,
        });
        assert_eq!(
            unnamed,
            "eatmydata: skipped 2 flushes where no file system could be named (sync(), an msync of an unknown range): not estimated\n"
        );
    }
}
