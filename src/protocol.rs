//! What the command and the library say to each other, defined once.
//!
//! Both products include this file (`#[path]`): it links no hook into the
//! command and no std into the library, so it uses `core` only and never
//! allocates. It holds the `EATMYDATA_*` variables, the rule for when a
//! switch is on, and the two formats the library writes and the command
//! reads: the report line (`--report`) and the flush record
//! (`--sync-at-exit`). Each format is a pair of pure functions, a writer
//! into a buffer the caller gives and a parser, tested by a round trip.

/// Makes the library a pure pass-through when on (see [`switch_on`]): for
/// images that set `LD_PRELOAD` globally and want durability back for one
/// command.
pub const DISABLE: &str = "EATMYDATA_DISABLE";

/// Keeps `O_DIRECT` on opens and `F_SETFL` when on (`--keep-direct`).
pub const KEEP_DIRECT: &str = "EATMYDATA_KEEP_DIRECT";

/// Names the file to which each process appends its report line at exit
/// (`--report`). The file must exist: the library never creates it.
pub const REPORT: &str = "EATMYDATA_REPORT";

/// The path of the library, for the command, instead of looking for it.
pub const LIBRARY: &str = "EATMYDATA_LIBRARY";

/// Names the file to which each process appends a [`Flush`] record the
/// first time it skips a sync on a file system (`--sync-at-exit`). The file
/// must exist.
pub const FLUSH_LIST: &str = "EATMYDATA_FLUSH_LIST";

/// Asks the command for `--sync-at-exit` when on, where no option can be
/// given (symlink mode). The library does not read it.
pub const SYNC_AT_EXIT: &str = "EATMYDATA_SYNC_AT_EXIT";

/// Silences the command's note about database clients when set and off.
pub const CLIENT_NOTICE: &str = "EATMYDATA_CLIENT_NOTICE";

/// Keeps the syncs on the mounts that hold these paths (`--keep`): a
/// list of absolute paths ([`write_paths`], read by [`read_paths`]). Each
/// process resolves them when it starts, each to the mount that holds it
/// (`statx(2)`'s `STATX_MNT_ID`, or the device where the kernel has no
/// mount ids), and decides every sync by the mount of its descriptor
/// (`durability::mount::Scope`): a sync on a kept mount reaches the disk,
/// every other one is eaten. An entry that cannot be read ([`Unread`]:
/// relative, empty, naming no mount, past the most that are learned)
/// makes the process keep every sync: unsure is durable. In a container
/// the paths are those inside it (mount destinations).
pub const KEEP: &str = "EATMYDATA_KEEP";

/// Eats the syncs only on the mounts that hold these paths (`--only`), a
/// list as [`KEEP`]'s: every other sync reaches the disk. An entry that
/// cannot be read keeps every sync, as in [`KEEP`]. With [`KEEP`] as
/// well, a sync is eaten where this list says and `KEEP` does not: keep
/// wins.
pub const ONLY: &str = "EATMYDATA_ONLY";

/// What separates the paths of [`KEEP`] and [`ONLY`], as in `PATH`.
pub const PATH_SEPARATOR: u8 = b':';

/// Whether `path` can be an entry of [`KEEP`] or [`ONLY`]: absolute, and
/// without the separator or a NUL. A path with a colon cannot be named;
/// any other path on its mount (a folder above it) names the same mount.
pub fn mount_path_ok(path: &[u8]) -> bool {
    path.first() == Some(&b'/') && !path.iter().any(|&b| b == PATH_SEPARATOR || b == 0)
}

/// The bytes [`write_paths`] needs for `paths`.
pub fn paths_len(paths: &[&[u8]]) -> usize {
    paths
        .iter()
        .map(|path| path.len() + 1)
        .sum::<usize>()
        .saturating_sub(1)
}

/// Writes `paths` into `out` as a value of [`KEEP`] or [`ONLY`]
/// (`/a:/b/c`) and returns its length; `None` when a path is not
/// [`mount_path_ok`] or `out` is shorter than [`paths_len`].
pub fn write_paths(out: &mut [u8], paths: &[&[u8]]) -> Option<usize> {
    if !paths.iter().all(|path| mount_path_ok(path)) || out.len() < paths_len(paths) {
        return None;
    }
    let mut line = Writer { out, len: 0 };
    for (at, path) in paths.iter().enumerate() {
        if at > 0 {
            line.push(&[PATH_SEPARATOR]);
        }
        line.push(path);
    }
    Some(line.len)
}

/// The two lists that scope the eating by mount.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum List {
    Keep,
    Only,
}

impl List {
    /// The variable that holds it.
    pub const fn variable(self) -> &'static str {
        match self {
            List::Keep => KEEP,
            List::Only => ONLY,
        }
    }

    /// Its word in a report line's `unread` key.
    const fn key(self) -> &'static str {
        match self {
            List::Keep => "keep",
            List::Only => "only",
        }
    }
}

/// Why an entry of a keep list cannot be read. Any of them keeps every
/// sync of the process (or container) that reads the list: the direction
/// that loses nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unread {
    /// Not absolute (`data`): relative to what, a process cannot know.
    Relative,
    /// Not an entry at all: an empty one (`/data:`, `/a::/b`), or one
    /// with a NUL.
    Unparsable,
    /// Resolves to no mount: the path is not there (or cannot be reached).
    NoMount,
    /// Past the most mounts a process learns of one list.
    TooMany,
}

impl Unread {
    const ALL: [Unread; 4] = [
        Unread::Relative,
        Unread::Unparsable,
        Unread::NoMount,
        Unread::TooMany,
    ];

    /// Its word in a report line.
    pub const fn key(self) -> &'static str {
        match self {
            Unread::Relative => "relative",
            Unread::Unparsable => "unparsable",
            Unread::NoMount => "no-mount",
            Unread::TooMany => "too-many",
        }
    }

    fn from_key(key: &str) -> Option<Unread> {
        Unread::ALL.into_iter().find(|why| why.key() == key)
    }

    /// What a user reads after the entry: `data is relative`.
    pub const fn words(self) -> &'static str {
        match self {
            Unread::Relative => "is relative",
            Unread::Unparsable => "cannot be parsed (an empty entry)",
            Unread::NoMount => "names no mount",
            Unread::TooMany => "is past the 16 mounts a list can name",
        }
    }
}

/// The entry of a list that could not be read, and why. For an empty
/// entry ([`Unread::Unparsable`]) it is the whole value, which shows
/// where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadEntry<'a> {
    pub entry: &'a [u8],
    pub why: Unread,
}

/// The one reading of a keep list ([`KEEP`], [`ONLY`], the runtime's
/// annotation, its kept binds): the entries of `value` in order, each
/// absolute, or the first that cannot be read by its form (empty,
/// relative). An empty value is an empty list. Whether each names a mount
/// is for the reader to find (`durability::mount::Scope::learn`).
pub fn read_paths(value: &[u8]) -> Result<impl Iterator<Item = &[u8]>, BadEntry<'_>> {
    let entries = || value.split(|&byte| byte == PATH_SEPARATOR);
    if !value.is_empty() {
        for entry in entries() {
            let why = match entry.first() {
                None => Unread::Unparsable,
                Some(_) if entry.contains(&0) => Unread::Unparsable,
                Some(b'/') => continue,
                Some(_) => Unread::Relative,
            };
            let entry = if entry.is_empty() { value } else { entry };
            return Err(BadEntry { entry, why });
        }
    }
    Ok(entries().filter(|entry| !entry.is_empty()))
}

/// A list a process could not read: which, and its entry that could
/// not be read. The process keeps every sync.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unreadable<'a> {
    pub list: List,
    pub bad: BadEntry<'a>,
}

/// The most bytes of an unread entry a report line keeps.
pub const UNREAD_MAX: usize = 64;

/// The value the command gives a switch it turns on.
pub const ON: &str = "1";

/// Whether a switch's value turns it on: set, not empty and not `0`.
pub fn switch_on(value: &[u8]) -> bool {
    !value.is_empty() && value != b"0"
}

/// Gives a program that goes without the library at an exec (the rule of
/// `durability/exec.rs`: static, 32-bit, foreign, sanitizer-linked, in a
/// chroot) the command's plain seccomp filter just before the exec, where
/// the process has no filter yet, so that its syncs are still answered.
/// Set by the command when it runs its program with the library and no
/// filter (not with `--no-seccomp` or kept mounts): [`ON`], or
/// [`CHILD_FILTER_TELL`] under `-v`, which also has each such exec said
/// on stderr. The library alone (`LD_PRELOAD` set by hand, the runtime's
/// containers, which have their own rules) installs nothing.
pub const CHILD_FILTER: &str = "EATMYDATA_CHILD_FILTER";

/// [`CHILD_FILTER`]'s value under `eatmydata -v`.
pub const CHILD_FILTER_TELL: &str = "verbose";

/// What a value of [`CHILD_FILTER`] asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildFilter {
    Off,
    On,
    /// On, and each child said on stderr.
    Tell,
}

/// [`CHILD_FILTER`]'s value read: a switch, with one value of its own.
pub fn child_filter(value: &[u8]) -> ChildFilter {
    if value == CHILD_FILTER_TELL.as_bytes() {
        ChildFilter::Tell
    } else if switch_on(value) {
        ChildFilter::On
    } else {
        ChildFilter::Off
    }
}

/// The kinds of skip the library counts for `--report`, in the order of
/// the report line's fields. To add one: a variant at the end here and its
/// row at the end of [`SKIPS`]; the line and the command's table follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// fsync and fdatasync.
    Fsync,
    /// sync and syncfs.
    Sync,
    SyncFileRange,
    /// msync with MS_SYNC.
    Msync,
    /// An open that asked for O_SYNC or O_DSYNC.
    SyncOpen,
    /// A write that asked for RWF_SYNC or RWF_DSYNC.
    SyncWrite,
    /// An open or F_SETFL that asked for O_DIRECT.
    Direct,
}

impl Skip {
    /// Whether a skip of this kind stands for one flush of a file system,
    /// the unit of the report's estimate: an fsync, fdatasync, syncfs or
    /// sync, an `MS_SYNC` msync, a `RWF_SYNC` write. Not sync_file_range,
    /// which starts or waits for writeback but never commits a journal or
    /// flushes a disk's cache, nor an open, whose writes are not counted.
    pub const fn is_flush(self) -> bool {
        matches!(
            self,
            Skip::Fsync | Skip::Sync | Skip::Msync | Skip::SyncWrite
        )
    }
}

/// One row per kind of skip: the kind, its key in the report line, and its
/// heading in the command's table.
pub const SKIPS: [(Skip, &str, &str); 7] = [
    (Skip::Fsync, "fsync", "fsync"),
    (Skip::Sync, "sync", "sync"),
    (Skip::SyncFileRange, "range", "sync_file_range"),
    (Skip::Msync, "msync", "msync"),
    (Skip::SyncOpen, "open", "O_SYNC opens"),
    (Skip::SyncWrite, "write", "RWF_SYNC writes"),
    (Skip::Direct, "direct", "O_DIRECT"),
];

// Each row sits at its kind's index: `counts[skip as usize]` is its count.
const _: () = {
    let mut at = 0;
    while at < SKIPS.len() {
        assert!(SKIPS[at].0 as usize == at, "SKIPS is out of Skip's order");
        at += 1;
    }
};

/// A process's counts, indexed by [`Skip`].
pub type Counts = [u64; SKIPS.len()];

/// A buffer that always holds a whole report line: the name is cut to
/// [`NAME_MAX`] bytes, at most [`PLACES`] file systems are named for the
/// flushes skipped and as many for those kept, and every number has at
/// most 20 digits.
pub const REPORT_LINE_MAX: usize = 1920;

/// The most file systems one report line names; flushes skipped on more
/// are counted with those where none could be named.
pub const PLACES: usize = 16;

/// A device number, major and minor, as `statx(2)` gives it.
pub type Device = (u32, u32);

/// Where a process's skipped flushes (those of a kind that
/// [`Skip::is_flush`]) were: per file system, by its device, and those where
/// none could be named (`sync()`, an msync of an unknown range).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Flushes {
    on: [(Device, u64); PLACES],
    /// How many of `on` are used.
    len: usize,
    pub unnamed: u64,
}

impl Flushes {
    pub const NONE: Flushes = Flushes {
        on: [((0, 0), 0); PLACES],
        len: 0,
        unnamed: 0,
    };

    /// Adds `count` flushes on `device`: to its entry, to a new one, or,
    /// with [`PLACES`] entries taken, to the unnamed.
    pub fn add(&mut self, device: Device, count: u64) {
        let used = self.len.min(PLACES);
        if let Some(entry) = self.on.iter_mut().take(used).find(|(d, _)| *d == device) {
            entry.1 = entry.1.saturating_add(count);
        } else if let Some(entry) = self.on.get_mut(used) {
            *entry = (device, count);
            self.len = used + 1;
        } else {
            self.unnamed = self.unnamed.saturating_add(count);
        }
    }

    /// Each file system named, with its flushes, in the order added.
    pub fn on(&self) -> &[(Device, u64)] {
        self.on.get(..self.len).unwrap_or_default()
    }
}

/// The most bytes of a program's name a report line keeps.
pub const NAME_MAX: usize = 64;

/// One process's report line, as written and as read back.
#[derive(Debug, PartialEq)]
pub struct ReportLine<'a> {
    pub pid: u64,
    /// Printable ASCII only: the writer shows other bytes as `?`.
    pub name: &'a str,
    pub counts: Counts,
    /// The flushes skipped, by file system.
    pub flushes: Flushes,
    /// The flushes kept (keep by mount: a sync of a kind that
    /// [`Skip::is_flush`], on a kept mount, that went to the kernel), by
    /// file system; those where none could be named (`sync()` made whole,
    /// a file whose mount could not be told) as its unnamed. None in the
    /// line of an older library, which did not count them.
    pub kept: Flushes,
    /// The list the process could not read, which made it keep every
    /// sync; its entry shown as the name is (printable ASCII, cut to
    /// [`UNREAD_MAX`] bytes).
    pub unread: Option<Unreadable<'a>>,
}

/// Writes the report line of a process into `out` and returns its length:
/// `pid=… name=… fsync=… … direct=… flushes_on=MAJOR:MINOR:COUNT,…
/// flushes_unnamed=… kept_on=MAJOR:MINOR:COUNT,… kept_unnamed=…
/// [unread=LIST:WHY:ENTRY]\n`. `name`'s bytes other than printable ASCII
/// are written as `?`, and it is cut to [`NAME_MAX`] bytes, the unread
/// entry likewise to [`UNREAD_MAX`]; what does not fit in `out` is left
/// out ([`REPORT_LINE_MAX`] bytes always fit). The kept flushes and the
/// unread list come last, in keys of their own: an older reader skips
/// keys it does not know.
pub fn write_report(
    out: &mut [u8],
    pid: u64,
    name: &[u8],
    counts: &Counts,
    (flushes, kept): (&Flushes, &Flushes),
    unread: Option<Unreadable>,
) -> usize {
    let mut line = Writer { out, len: 0 };
    line.push(b"pid=");
    line.number(pid);
    line.push(b" name=");
    line.shown(name, NAME_MAX);
    for ((_, key, _), count) in SKIPS.iter().zip(counts) {
        line.push(b" ");
        line.push(key.as_bytes());
        line.push(b"=");
        line.number(*count);
    }
    line.places(b" flushes_on=", b" flushes_unnamed=", flushes);
    line.places(b" kept_on=", b" kept_unnamed=", kept);
    if let Some(Unreadable { list, bad }) = unread {
        line.push(b" unread=");
        line.push(list.key().as_bytes());
        line.push(b":");
        line.push(bad.why.key().as_bytes());
        line.push(b":");
        line.shown(bad.entry, UNREAD_MAX);
    }
    line.push(b"\n");
    line.len
}

/// Reads a value of `flushes_on` or `kept_on` into `into`: `None` when an
/// entry is not three numbers.
fn parse_places(value: &str, into: &mut Flushes) -> Option<()> {
    for place in value.split(',').filter(|place| !place.is_empty()) {
        let mut numbers = place.split(':');
        let mut next = || numbers.next()?.parse::<u64>().ok();
        let (major, minor, count) = (next()?, next()?, next()?);
        if next().is_some() {
            return None;
        }
        into.add((major.try_into().ok()?, minor.try_into().ok()?), count);
    }
    Some(())
}

/// Reads a report line back: `None` for a line without a pid, a name or
/// numbers. A key it does not know is skipped, so that a command reads the
/// lines of a newer library.
pub fn parse_report(line: &str) -> Option<ReportLine<'_>> {
    let (mut pid, mut name, mut counts) = (None, None, [0; SKIPS.len()]);
    let (mut flushes, mut kept) = (Flushes::NONE, Flushes::NONE);
    let mut unread = None;
    for word in line.split_ascii_whitespace() {
        let (key, value) = word.split_once('=')?;
        match key {
            "pid" => pid = Some(value.parse().ok()?),
            "name" => name = Some(value),
            "flushes_unnamed" => {
                flushes.unnamed = flushes.unnamed.saturating_add(value.parse().ok()?);
            }
            "flushes_on" => parse_places(value, &mut flushes)?,
            "kept_unnamed" => kept.unnamed = kept.unnamed.saturating_add(value.parse().ok()?),
            "kept_on" => parse_places(value, &mut kept)?,
            "unread" => unread = Some(parse_unread(value)?),
            _ => {
                if let Some(at) = SKIPS.iter().position(|(_, field, _)| *field == key) {
                    *counts.get_mut(at)? = value.parse().ok()?;
                }
            }
        }
    }
    Some(ReportLine {
        pid: pid?,
        name: name?,
        counts,
        flushes,
        kept,
        unread,
    })
}

/// Reads a value of `unread`: `LIST:WHY:ENTRY`.
fn parse_unread(value: &str) -> Option<Unreadable<'_>> {
    let mut parts = value.splitn(3, ':');
    let list = match parts.next()? {
        "keep" => List::Keep,
        "only" => List::Only,
        _ => return None,
    };
    let why = Unread::from_key(parts.next()?)?;
    let entry = parts.next()?.as_bytes();
    Some(Unreadable {
        list,
        bad: BadEntry { entry, why },
    })
}

/// A flush record: where a process skipped a sync, for `--sync-at-exit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flush {
    /// On the file system of this device (major, minor): `syncfs(2)` it.
    Device(u32, u32),
    /// Where no file system can be named (`sync()`, an `msync` of an
    /// unknown range): `sync(2)`.
    All,
}

/// The size of every record, so that one `write(2)` on an `O_APPEND`
/// descriptor never interleaves with another process's.
pub const FLUSH_RECORD_LEN: usize = 22;

/// The record `dev MAJOR:MINOR\n` or `all 00000000:00000000\n`, the numbers
/// in 8 hex digits each.
pub fn write_flush(record: Flush) -> [u8; FLUSH_RECORD_LEN] {
    let (word, major, minor) = match record {
        Flush::Device(major, minor) => (b"dev", major, minor),
        Flush::All => (b"all", 0, 0),
    };
    let mut line = [b' '; FLUSH_RECORD_LEN];
    let mut writer = Writer {
        out: &mut line,
        len: 0,
    };
    writer.push(word);
    writer.push(b" ");
    writer.hex(major);
    writer.push(b":");
    writer.hex(minor);
    writer.push(b"\n");
    line
}

/// Reads a record back (without its newline); `None` for anything else.
pub fn parse_flush(line: &str) -> Option<Flush> {
    let (word, device) = line.split_once(' ')?;
    let (major, minor) = device.split_once(':')?;
    let hex = |n| u32::from_str_radix(n, 16).ok();
    match word {
        "dev" => Some(Flush::Device(hex(major)?, hex(minor)?)),
        "all" => Some(Flush::All),
        _ => None,
    }
}

/// Bytes pushed into a caller's buffer; what does not fit is left out.
struct Writer<'a> {
    out: &'a mut [u8],
    len: usize,
}

impl Writer<'_> {
    fn push(&mut self, text: &[u8]) {
        for &byte in text {
            if let Some(slot) = self.out.get_mut(self.len) {
                *slot = byte;
                self.len += 1;
            }
        }
    }

    /// `text`'s first `max` bytes, those other than printable ASCII as `?`.
    fn shown(&mut self, text: &[u8], max: usize) {
        for &byte in text.iter().take(max) {
            self.push(&[if byte.is_ascii_graphic() { byte } else { b'?' }]);
        }
    }

    fn number(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut start = digits.len();
        while start > 0 {
            start -= 1;
            if let Some(digit) = digits.get_mut(start) {
                *digit = b'0' + (n % 10) as u8;
            }
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.push(digits.get(start..).unwrap_or_default());
    }

    /// `key` and each file system of `flushes` as `MAJOR:MINOR:COUNT`,
    /// then `unnamed` and its count.
    fn places(&mut self, key: &[u8], unnamed: &[u8], flushes: &Flushes) {
        self.push(key);
        for (at, ((major, minor), count)) in flushes.on().iter().enumerate() {
            if at > 0 {
                self.push(b",");
            }
            self.number((*major).into());
            self.push(b":");
            self.number((*minor).into());
            self.push(b":");
            self.number(*count);
        }
        self.push(unnamed);
        self.number(flushes.unnamed);
    }

    fn hex(&mut self, n: u32) {
        for shift in (0..8).rev() {
            let digit = b"0123456789abcdef".get(((n >> (4 * shift)) & 0xf) as usize);
            self.push(&[digit.copied().unwrap_or(b'0')]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_child_filter_is_a_switch_with_a_verbose_value() {
        assert_eq!(child_filter(ON.as_bytes()), ChildFilter::On);
        assert_eq!(
            child_filter(CHILD_FILTER_TELL.as_bytes()),
            ChildFilter::Tell
        );
        assert_eq!(child_filter(b"yes"), ChildFilter::On);
        assert_eq!(child_filter(b"0"), ChildFilter::Off);
        assert_eq!(child_filter(b""), ChildFilter::Off);
    }

    fn report(
        pid: u64,
        name: &[u8],
        counts: &Counts,
        flushes: &Flushes,
        kept: &Flushes,
    ) -> ([u8; REPORT_LINE_MAX], usize) {
        let mut out = [0; REPORT_LINE_MAX];
        let len = write_report(&mut out, pid, name, counts, (flushes, kept), None);
        (out, len)
    }

    #[test]
    fn an_unread_list_reads_back_as_written() {
        let none = Flushes::NONE;
        let counts = [0; SKIPS.len()];
        for (list, entry, why, shown) in [
            (
                List::Keep,
                &b"data"[..],
                Unread::Relative,
                "keep:relative:data",
            ),
            (
                List::Keep,
                b"/data:",
                Unread::Unparsable,
                "keep:unparsable:/data:",
            ),
            (
                List::Only,
                b"/no where",
                Unread::NoMount,
                "only:no-mount:/no?where",
            ),
            (List::Keep, b"/x", Unread::TooMany, "keep:too-many:/x"),
        ] {
            let unread = Unreadable {
                list,
                bad: BadEntry { entry, why },
            };
            let mut out = [0; REPORT_LINE_MAX];
            let len = write_report(&mut out, 7, b"pg", &counts, (&none, &none), Some(unread));
            let line = core::str::from_utf8(&out[..len]).unwrap();
            assert!(line.ends_with(&format!(" unread={shown}\n")), "{line}");
            let read = parse_report(line).unwrap().unread.unwrap();
            assert_eq!((read.list, read.bad.why), (list, why));
            assert_eq!(
                read.bad.entry,
                shown.splitn(3, ':').nth(2).unwrap().as_bytes()
            );
        }
        let long = [b'/'; 300];
        let unread = Unreadable {
            list: List::Keep,
            bad: BadEntry {
                entry: &long,
                why: Unread::NoMount,
            },
        };
        let mut out = [0; REPORT_LINE_MAX];
        let len = write_report(&mut out, 7, b"pg", &counts, (&none, &none), Some(unread));
        let line = core::str::from_utf8(&out[..len]).unwrap();
        let read = parse_report(line).unwrap().unread.unwrap();
        assert_eq!(read.bad.entry.len(), UNREAD_MAX);
        assert_eq!(parse_report("pid=1 name=a unread=keep:odd:x"), None);
        assert_eq!(parse_report("pid=1 name=a unread=all:relative:x"), None);
        assert_eq!(parse_report("pid=1 name=a").unwrap().unread, None);
    }

    #[test]
    fn a_report_line_reads_back_as_written() {
        let mut flushes = Flushes::NONE;
        flushes.add((7, 3), 12000);
        flushes.add((254, 1), 2);
        flushes.add((7, 3), 4);
        flushes.unnamed = 1;
        let mut kept = Flushes::NONE;
        kept.add((7, 4), 100);
        kept.unnamed = 3;
        let counts = [12004, 0, 1, 2, 3, 4, 5];
        let (out, len) = report(4242, b"sqlite3", &counts, &flushes, &kept);
        let line = core::str::from_utf8(&out[..len]).unwrap();
        assert_eq!(
            line,
            "pid=4242 name=sqlite3 fsync=12004 sync=0 range=1 msync=2 open=3 write=4 direct=5 flushes_on=7:3:12004,254:1:2 flushes_unnamed=1 kept_on=7:4:100 kept_unnamed=3\n"
        );
        let read = parse_report(line).unwrap();
        assert_eq!((read.pid, read.name), (4242, "sqlite3"));
        assert_eq!(read.counts, [12004, 0, 1, 2, 3, 4, 5]);
        assert_eq!(read.flushes, flushes);
        assert_eq!(read.flushes.on(), [((7, 3), 12004), ((254, 1), 2)]);
        assert_eq!(read.kept, kept);

        let none = Flushes::NONE;
        let (out, len) = report(1, b"sh", &[0; SKIPS.len()], &none, &none);
        let line = core::str::from_utf8(&out[..len]).unwrap();
        assert!(
            line.ends_with(" flushes_on= flushes_unnamed=0 kept_on= kept_unnamed=0\n"),
            "{line}"
        );
        let read = parse_report(line).unwrap();
        assert_eq!((read.flushes, read.kept), (none, none));
    }

    #[test]
    fn odd_names_are_made_safe_and_the_longest_line_fits() {
        let none = Flushes::NONE;
        let (out, len) = report(u64::MAX, b"a b\nc\xff", &[0; SKIPS.len()], &none, &none);
        let line = core::str::from_utf8(&out[..len]).unwrap();
        assert_eq!(parse_report(line).unwrap().name, "a?b?c?");
        let mut most = Flushes::NONE;
        for at in 0..PLACES as u32 {
            most.add((u32::MAX - at, u32::MAX), u64::MAX);
        }
        most.unnamed = u64::MAX;
        let counts = [u64::MAX; SKIPS.len()];
        let (out, len) = report(u64::MAX, &[b'x'; 300], &counts, &most, &most);
        let line = core::str::from_utf8(&out[..len]).unwrap();
        assert!(
            line.ends_with(" kept_unnamed=18446744073709551615\n"),
            "{line}"
        );
        assert!(len < REPORT_LINE_MAX, "{len}");
        let read = parse_report(line).unwrap();
        assert_eq!(read.name.len(), NAME_MAX);
        assert_eq!(read.counts, [u64::MAX; SKIPS.len()]);
        assert_eq!((read.flushes, read.kept), (most, most));
    }

    /// `parse_report` as it stood before the kept flushes (commit
    /// 7cedb3b), kept as it was: what an older command or runtime reads.
    fn parse_report_before_kept(line: &str) -> Option<(u64, &str, Counts, Flushes)> {
        let (mut pid, mut name, mut counts) = (None, None, [0; SKIPS.len()]);
        let mut flushes = Flushes::NONE;
        for word in line.split_ascii_whitespace() {
            let (key, value) = word.split_once('=')?;
            match key {
                "pid" => pid = Some(value.parse().ok()?),
                "name" => name = Some(value),
                "flushes_unnamed" => {
                    flushes.unnamed = flushes.unnamed.saturating_add(value.parse().ok()?);
                }
                "flushes_on" => {
                    for place in value.split(',').filter(|place| !place.is_empty()) {
                        let mut numbers = place.split(':');
                        let mut next = || numbers.next()?.parse::<u64>().ok();
                        let (major, minor, count) = (next()?, next()?, next()?);
                        if next().is_some() {
                            return None;
                        }
                        let device = (major.try_into().ok()?, minor.try_into().ok()?);
                        flushes.add(device, count);
                    }
                }
                _ => {
                    if let Some(at) = SKIPS.iter().position(|(_, field, _)| *field == key) {
                        *counts.get_mut(at)? = value.parse().ok()?;
                    }
                }
            }
        }
        Some((pid?, name?, counts, flushes))
    }

    #[test]
    fn older_and_newer_readers_read_each_others_lines() {
        let mut flushes = Flushes::NONE;
        flushes.add((7, 3), 9);
        let mut kept = Flushes::NONE;
        kept.add((7, 4), 100);
        kept.add((8, 1), 2);
        kept.unnamed = 1;
        let (out, len) = report(5, b"pg", &[9, 0, 0, 0, 0, 0, 0], &flushes, &kept);
        let newer = core::str::from_utf8(&out[..len]).unwrap();
        // An older reader takes a newer line, the kept flushes left aside.
        assert_eq!(
            parse_report_before_kept(newer),
            Some((5, "pg", [9, 0, 0, 0, 0, 0, 0], flushes))
        );
        // A newer reader takes an older library's line: nothing kept.
        let older = "pid=5 name=pg fsync=9 sync=0 range=0 msync=0 open=0 write=0 direct=0 flushes_on=7:3:9 flushes_unnamed=0";
        let read = parse_report(older).unwrap();
        assert_eq!((read.counts[0], read.flushes), (9, flushes));
        assert_eq!(read.kept, Flushes::NONE);
        // A kept entry is read as strictly as a skipped one.
        for bad in ["7:4", "7:4:x", "7:4:1:1", "99999999999:0:1"] {
            let line = format!("{older} kept_on={bad}");
            assert!(parse_report(&line).is_none(), "{line}");
        }
        assert!(parse_report(&format!("{older} kept_unnamed=x")).is_none());
    }

    #[test]
    fn flushes_past_the_last_place_count_as_unnamed() {
        let mut flushes = Flushes::NONE;
        for at in 0..PLACES as u32 + 2 {
            flushes.add((8, at), 10);
        }
        flushes.add((8, 0), 1);
        assert_eq!(flushes.on().len(), PLACES);
        assert_eq!(flushes.on()[0], ((8, 0), 11));
        assert_eq!(flushes.unnamed, 20);
    }

    #[test]
    fn only_the_kinds_that_flush_a_file_system_are_flushes() {
        let flushes: Vec<Skip> = SKIPS
            .iter()
            .map(|(skip, _, _)| *skip)
            .filter(|skip| skip.is_flush())
            .collect();
        assert_eq!(
            flushes,
            [Skip::Fsync, Skip::Sync, Skip::Msync, Skip::SyncWrite]
        );
    }

    #[test]
    fn a_report_line_needs_a_pid_a_name_and_numbers() {
        assert!(parse_report("pid=1 fsync=2").is_none());
        assert!(parse_report("name=x fsync=2").is_none());
        assert!(parse_report("pid=1 name=x fsync=two").is_none());
        assert!(parse_report("garbage").is_none());
        let newer = parse_report("pid=1 name=x fsync=2 uring=9 direct=3").unwrap();
        assert_eq!(newer.counts, [2, 0, 0, 0, 0, 0, 3]);
        assert_eq!(newer.flushes, Flushes::NONE, "a line of an older library");
        for bad in ["7:3", "7:3:x", "7:3:1:1", "99999999999:0:1", "7:3:1,8"] {
            let line = format!("pid=1 name=x flushes_on={bad}");
            assert!(parse_report(&line).is_none(), "{line}");
        }
        let spaced = parse_report("pid=1 name=x flushes_on=7:3:1,,8:0:2").unwrap();
        assert_eq!(spaced.flushes.on(), [((7, 3), 1), ((8, 0), 2)]);
    }

    #[test]
    fn flush_records_read_back_as_written() {
        assert_eq!(
            &write_flush(Flush::Device(7, 3)),
            b"dev 00000007:00000003\n"
        );
        assert_eq!(&write_flush(Flush::All), b"all 00000000:00000000\n");
        for record in [
            Flush::Device(259, 0xfffff),
            Flush::Device(u32::MAX, 0),
            Flush::All,
        ] {
            let line = write_flush(record);
            let text = core::str::from_utf8(&line).unwrap();
            assert_eq!(parse_flush(text.trim_end()), Some(record));
        }
        assert_eq!(parse_flush("dev 1:0"), Some(Flush::Device(1, 0)));
        assert_eq!(parse_flush("dev zz"), None);
        assert_eq!(parse_flush("new 00000001:00000002"), None);
    }

    fn read(value: &[u8]) -> Result<Vec<&[u8]>, BadEntry<'_>> {
        read_paths(value).map(Iterator::collect)
    }

    fn bad(entry: &[u8], why: Unread) -> Result<Vec<&[u8]>, BadEntry<'_>> {
        Err(BadEntry { entry, why })
    }

    #[test]
    fn kept_paths_read_back_as_written() {
        let paths: [&[u8]; 3] = [b"/", b"/srv/data", b"/b/\xff odd\n"];
        let mut out = [0u8; 64];
        let len = write_paths(&mut out, &paths).unwrap();
        assert_eq!(len, paths_len(&paths));
        assert_eq!(&out[..len], b"/:/srv/data:/b/\xff odd\n");
        assert_eq!(read(&out[..len]), Ok(paths.to_vec()));
        assert_eq!(write_paths(&mut out, &[]), Some(0));
        assert_eq!(read(b""), Ok(vec![]));
    }

    #[test]
    fn a_list_with_an_entry_it_cannot_read_names_the_first() {
        assert_eq!(read(b"data"), bad(b"data", Unread::Relative));
        assert_eq!(read(b"/a:./b:c"), bad(b"./b", Unread::Relative));
        assert_eq!(read(b"/a:~/b"), bad(b"~/b", Unread::Relative));
        // An empty entry shows the whole value, where it is.
        for value in [&b"/data:"[..], b":/data", b"/a::/b", b":", b"/a:b:"] {
            let first = if value == b"/a:b:" {
                bad(b"b", Unread::Relative)
            } else {
                bad(value, Unread::Unparsable)
            };
            assert_eq!(read(value), first, "{value:?}");
        }
        assert_eq!(read(b"/a\0b"), bad(b"/a\0b", Unread::Unparsable));
        for why in Unread::ALL {
            assert_eq!(Unread::from_key(why.key()), Some(why));
            assert!(!why.words().is_empty());
        }
    }

    #[test]
    fn only_absolute_paths_without_a_colon_are_written() {
        assert!(mount_path_ok(b"/a") && mount_path_ok(b"/"));
        for bad in [&b""[..], b"a", b"./a", b"/a:b", b"/a\0b"] {
            assert!(!mount_path_ok(bad), "{bad:?}");
            assert_eq!(write_paths(&mut [0; 16], &[b"/x", bad]), None);
        }
        assert_eq!(write_paths(&mut [0; 4], &[b"/x", b"/y"]), None);
        assert_eq!(write_paths(&mut [0; 5], &[b"/x", b"/y"]), Some(5));
    }

    #[test]
    fn switches_read_like_booleans() {
        assert!(switch_on(b"1") && switch_on(b"yes") && switch_on(ON.as_bytes()));
        assert!(!switch_on(b"0") && !switch_on(b""));
    }
}
