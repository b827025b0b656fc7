//! `eatmydata-runtime report [--since TIME] [--json | --markdown]`: the
//! account summed up: containers served, processes, skips by kind, flushes
//! by file system, and what those flushes would have cost, estimated as
//! `eatmydata --report` estimates it (a few rounds of flushes timed now on
//! each file system concerned, `estimate.rs`), said as a range. Every count
//! a person reads is grouped by thousands (`1,250`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::book::{self, Book};
use super::record::Record;
use super::shown;
use super::time;
use crate::estimate::{self, Saved, Timed};
use crate::protocol::{Counts, Device, SKIPS};
use crate::report::Flushes;

pub const HELP: &str = "\
usage: eatmydata-runtime report [--since TIME] [--json | --markdown]

Sums up the account of the containers the runtime served
(/var/lib/eatmydata/account.jsonl; EATMYDATA_HOME/account.jsonl when that
is set; or in the folder EATMYDATA_ACCOUNT names):
containers, processes, what their processes skipped, and the time the
flushes skipped would have taken, a range estimated by timing a few
rounds of flushes now on each file system concerned. A container is
counted each time it ends: when its process has ended and the engine
deletes it from the runtime (docker stop, its command's end, a pod's
container stopped), not at docker rm; one started again is counted again.

  --since TIME   only containers that ended since TIME: RFC 3339
                 (2026-12-02T10:00:00Z) or a duration back from now (90s,
                 15m, 2h, 7d)
  --json         {\"containers\": [...], \"total\": ..., \"estimate\": ...}
  --markdown     a summary for a CI job's page

Each container listed names its mount destinations (its rootfs /, its
binds and volumes) with the flushes eaten there and those kept (reached
the disk: a mount it keeps, EATMYDATA_KEEP or --keep-binds).

Static and Go programs, whose syncs the seccomp rules alone answer (or,
where a container keeps a mount, which keep every sync), and processes
that end by _exit, exec or a signal are not counted.
";

/// What is never counted, said with every report.
pub const NOT_COUNTED: &str = "Not counted: static and Go programs, whose syncs the seccomp rules alone answer, and processes that end by _exit, exec or a signal.";

#[derive(Debug, PartialEq)]
enum Format {
    Text,
    Json,
    Markdown,
}

#[derive(Debug, PartialEq)]
struct Asked {
    since: Option<i64>,
    format: Format,
}

fn parse(args: &[OsString], now: i64) -> Result<Asked, String> {
    let mut asked = Asked {
        since: None,
        format: Format::Text,
    };
    let mut args = args.iter().map(|a| a.to_string_lossy().into_owned());
    while let Some(arg) = args.next() {
        let since = match arg.as_str() {
            "--json" | "--markdown" if asked.format != Format::Text => {
                return Err("give one of --json and --markdown".into());
            }
            "--json" => {
                asked.format = Format::Json;
                continue;
            }
            "--markdown" => {
                asked.format = Format::Markdown;
                continue;
            }
            "--since" => args.next().ok_or("--since needs a time")?,
            _ => match arg.strip_prefix("--since=") {
                Some(value) => value.to_owned(),
                None => return Err(format!("unknown argument '{arg}'")),
            },
        };
        asked.since = Some(time::parse_since(&since, now).ok_or_else(|| {
            format!(
                "--since {since}: not an RFC 3339 time (2026-12-02T10:00:00Z) or a duration (2h)"
            )
        })?);
    }
    Ok(asked)
}

/// The account's records, summed.
#[derive(Debug, Default, PartialEq)]
struct Sum {
    containers: u64,
    processes: u64,
    skips: Counts,
    flushes: u64,
    by_device: BTreeMap<Device, (u64, String)>,
    unnamed: u64,
    /// Lines of containers' report files that were not report lines.
    unreadable: u64,
    /// Flushes of the build-step barriers (`runtime/barrier.rs`).
    barrier: u64,
    /// Eaten flushes by mount destination (`by_mount.rs`).
    by_mount: BTreeMap<String, u64>,
    /// Kept flushes (they reached the disk) by mount destination.
    kept_by_mount: BTreeMap<String, u64>,
    /// All kept flushes, those where no mount was named included.
    kept: u64,
    /// Containers that kept a mount: their static programs' syncs are
    /// kept uncounted.
    keeping: u64,
}

/// A container's flushes on one mount destination: eaten, and kept
/// (`None` where its record did not count them: an older runtime's).
#[derive(Debug, PartialEq)]
struct OnMount<'a> {
    on: &'a str,
    eaten: u64,
    kept: Option<u64>,
}

/// `record`'s flushes by mount destination, eaten and kept side by side,
/// the busiest first.
fn on_mounts(record: &Record) -> Vec<OnMount<'_>> {
    let mut by: BTreeMap<&str, OnMount> = BTreeMap::new();
    let counted = record.kept_by_mount.as_ref().map(|_| 0);
    for (on, count) in &record.eaten_by_mount {
        let entry = by.entry(on).or_insert(OnMount {
            on,
            eaten: 0,
            kept: counted,
        });
        entry.eaten = entry.eaten.saturating_add(*count);
    }
    for (on, count) in record.kept_by_mount.iter().flatten() {
        let entry = by.entry(on).or_insert(OnMount {
            on,
            eaten: 0,
            kept: counted,
        });
        entry.kept = Some(entry.kept.unwrap_or_default().saturating_add(*count));
    }
    let mut list: Vec<OnMount> = by.into_values().collect();
    list.sort_by_key(|m| std::cmp::Reverse(m.eaten.saturating_add(m.kept.unwrap_or_default())));
    list
}

/// What `report` says of a container that kept a mount: what its kept
/// counts leave out.
pub const KEPT_NOT_COUNTED: &str = "kept counts are of dynamic programs: a static program keeps every sync where a mount is kept, not counted";

fn sum(records: &[Record]) -> Sum {
    let mut sum = Sum::default();
    for record in records {
        sum.containers += 1;
        sum.processes = sum.processes.saturating_add(record.processes);
        for (total, count) in sum.skips.iter_mut().zip(record.skips) {
            *total = total.saturating_add(count);
        }
        sum.flushes = sum.flushes.saturating_add(record.flushes_skipped());
        for place in &record.flushes {
            let entry = sum.by_device.entry(place.device).or_default();
            entry.0 = entry.0.saturating_add(place.count);
            if !place.on.is_empty() {
                entry.1.clone_from(&place.on);
            }
        }
        sum.unnamed = sum.unnamed.saturating_add(record.flushes_unnamed);
        sum.unreadable = sum.unreadable.saturating_add(record.unreadable);
        sum.barrier = sum.barrier.saturating_add(record.barrier);
        for (on, count) in &record.eaten_by_mount {
            let total = sum.by_mount.entry(on.clone()).or_default();
            *total = total.saturating_add(*count);
        }
        for (on, count) in record.kept_by_mount.iter().flatten() {
            let total = sum.kept_by_mount.entry(on.clone()).or_default();
            *total = total.saturating_add(*count);
            sum.kept = sum.kept.saturating_add(*count);
        }
        sum.kept = sum.kept.saturating_add(record.kept_unnamed);
        sum.keeping += u64::from(!record.keeps.is_empty());
    }
    sum
}

/// The entry of `eatmydata-runtime report`.
pub fn run(args: Vec<OsString>) -> std::ffi::c_int {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{HELP}");
        return 0;
    }
    let now = time::now();
    let asked = match parse(&args, now) {
        Ok(asked) => asked,
        Err(why) => {
            eprintln!("eatmydata: report: {why}\n{HELP}");
            return 2;
        }
    };
    let folder = book::folder();
    let read = match read(&folder) {
        Ok(read) => read,
        Err(error) => {
            let why = format!(
                "eatmydata: report: cannot read the account in {}: {}",
                folder.display(),
                crate::error::plain(&error)
            );
            eprintln!(
                "{}",
                crate::runtime::help::with_root_hint(why, Some(&error))
            );
            return 1;
        }
    };
    let records: Vec<Record> = read
        .records
        .into_iter()
        .filter(|r| asked.since.is_none_or(|since| r.ended >= since))
        .collect();
    let sum = sum(&records);
    let flushes = Flushes {
        on: sum.by_device.iter().map(|(d, (n, _))| (*d, *n)).collect(),
        unnamed: sum.unnamed,
    };
    // The devices are a container's word: time flushes only in our own
    // folders, never at a mount point a record names.
    let timed = estimate::time_in_own_folders(&flushes);
    let out = match asked.format {
        Format::Text => text(
            &sum,
            &records,
            &timed,
            asked.since,
            &folder,
            read.unreadable,
        ),
        Format::Markdown => markdown(&sum, &records, &timed, asked.since),
        Format::Json => json_of(&sum, &records, &timed, asked.since, read.unreadable),
    };
    // JSON escapes control characters itself.
    match asked.format {
        Format::Json => print!("{out}"),
        _ => print!("{}", shown::visible(&out)),
    }
    0
}

/// The account in `folder`; none yet when the folder is missing.
fn read(folder: &Path) -> io::Result<book::Read> {
    match Book::open(folder) {
        Ok(book) => book.read(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(book::Read::default()),
        Err(e) => Err(e),
    }
}

/// The time saved on every file system where flushes were timed.
fn saved(timed: &[Timed]) -> Option<Saved> {
    let saved: Vec<Saved> = timed.iter().filter_map(Timed::saved).collect();
    (!saved.is_empty()).then(|| Saved::sum(&saved))
}

fn grouped(count: u64) -> String {
    estimate::grouped(count)
}

fn since_words(since: Option<i64>) -> String {
    since.map_or_else(String::new, |since| {
        format!(" since {}", time::format(since))
    })
}

/// How many containers a report lists, busiest first.
const SHOWN: usize = 20;

/// The [`SHOWN`] containers that skipped the most flushes, busiest first.
fn busiest(records: &[Record]) -> Vec<&Record> {
    let mut busiest: Vec<&Record> = records.iter().collect();
    busiest.sort_by_key(|r| std::cmp::Reverse(r.flushes_skipped()));
    busiest.truncate(SHOWN);
    busiest
}

fn more(records: &[Record]) -> u64 {
    records.len().saturating_sub(SHOWN) as u64
}

/// A container's id as engines show it: its first 12 characters.
fn short_id(record: &Record) -> String {
    record.id.chars().take(12).collect()
}

/// The text report's list of containers: name, image, id, processes,
/// flushes skipped; `–` for what the engine did not name.
fn listed(records: &[Record]) -> String {
    let mut out = String::new();
    if records.is_empty() {
        return out;
    }
    out.push_str("  containers, busiest first:\n");
    let or_dash = |text: &str| {
        if text.is_empty() {
            "–".to_owned()
        } else {
            text.to_owned()
        }
    };
    for record in busiest(records) {
        let _ = writeln!(
            out,
            "    {}  {}  {}  {} process{}, {} skipped",
            or_dash(&record.name),
            or_dash(&record.image),
            short_id(record),
            grouped(record.processes),
            if record.processes == 1 { "" } else { "es" },
            estimate::flushes_word(record.flushes_skipped())
        );
        out.push_str(&mounts_listed(record));
    }
    if records.len() > SHOWN {
        let _ = writeln!(out, "    and {} more", grouped(more(records)));
    }
    out
}

/// The most mount destinations listed under a container.
const MOUNTS_SHOWN: usize = 8;

/// Under a container in the text report: each mount destination with
/// its flushes eaten and kept, what was kept elsewhere, and what the kept
/// counts leave out.
fn mounts_listed(record: &Record) -> String {
    let mut out = String::new();
    let mounts = on_mounts(record);
    let width = mounts
        .iter()
        .take(MOUNTS_SHOWN)
        .map(|m| m.on.chars().count())
        .max()
        .unwrap_or(0);
    for mount in mounts.iter().take(MOUNTS_SHOWN) {
        let kept = mount.kept.map_or_else(|| "not counted".to_owned(), grouped);
        let _ = writeln!(
            out,
            "      {:<width$}  eaten {}, kept {kept}",
            mount.on,
            grouped(mount.eaten),
        );
    }
    if mounts.len() > MOUNTS_SHOWN {
        let _ = writeln!(out, "      and {} more mounts", mounts.len() - MOUNTS_SHOWN);
    }
    if record.kept_unnamed > 0 {
        let _ = writeln!(
            out,
            "      kept where no mount could be named: {}",
            grouped(record.kept_unnamed)
        );
    }
    if !record.keeps.is_empty() {
        let _ = writeln!(
            out,
            "      keeps {} ({KEPT_NOT_COUNTED})",
            record.keeps.join(" ")
        );
    }
    if let Some(said) = &record.unread {
        let _ = writeln!(out, "      {said}");
    }
    out
}

/// The 8 destinations of `by_mount` with the most flushes, each with its
/// count: `/data 120, / 3`.
fn busiest_mounts(by_mount: &BTreeMap<String, u64>) -> String {
    let mut busiest: Vec<(&String, &u64)> = by_mount.iter().collect();
    busiest.sort_by_key(|(_, count)| std::cmp::Reverse(**count));
    let list: Vec<String> = busiest
        .iter()
        .take(8)
        .map(|(on, count)| format!("{on} {}", grouped(**count)))
        .collect();
    list.join(", ")
}

fn text(
    sum: &Sum,
    records: &[Record],
    timed: &[Timed],
    since: Option<i64>,
    folder: &Path,
    torn: u64,
) -> String {
    let mut out = format!(
        "eatmydata-runtime: report: the account in {}{}\n",
        folder.display(),
        since_words(since)
    );
    let _ = writeln!(out, "  containers served  {}", grouped(sum.containers));
    let _ = writeln!(out, "  processes          {}", grouped(sum.processes));
    let _ = writeln!(out, "  flushes skipped    {}", grouped(sum.flushes));
    let kinds: Vec<String> = SKIPS
        .iter()
        .zip(sum.skips)
        .map(|((_, _, heading), count)| format!("{heading} {}", grouped(count)))
        .collect();
    let _ = writeln!(out, "  skips by kind      {}", kinds.join(", "));
    if sum.barrier > 0 {
        let _ = writeln!(
            out,
            "  flushes made       {} (build steps' barriers: one syncfs per file system a step wrote to)",
            grouped(sum.barrier)
        );
    }
    if !sum.by_mount.is_empty() {
        let _ = writeln!(
            out,
            "  eaten by mount     {}",
            busiest_mounts(&sum.by_mount)
        );
    }
    if sum.kept > 0 || sum.keeping > 0 {
        let list = match sum.kept_by_mount.is_empty() {
            true => "none".to_owned(),
            false => busiest_mounts(&sum.kept_by_mount),
        };
        let _ = writeln!(
            out,
            "  kept by mount      {list} (reached the disk: {} in all)",
            estimate::flushes_word(sum.kept)
        );
    }
    let unread: Vec<&Record> = records.iter().filter(|r| r.unread.is_some()).collect();
    for record in unread.iter().take(SHOWN) {
        let _ = writeln!(
            out,
            "  kept every sync    {} {}: {}",
            short_id(record),
            record.name,
            record.unread.as_deref().unwrap_or_default()
        );
    }
    if unread.len() > SHOWN {
        let _ = writeln!(
            out,
            "  kept every sync    and {} more",
            unread.len() - SHOWN
        );
    }
    let saved = saved(timed);
    let _ = writeln!(
        out,
        "  time saved         {}",
        saved.map_or_else(
            || "not estimated".to_owned(),
            |saved| format!("about {} (an estimate)", saved.words())
        )
    );
    for one in timed {
        out.push_str(&one.line());
    }
    if sum.unnamed > 0 {
        let _ = writeln!(
            out,
            "eatmydata: skipped {} where no file system could be named: not estimated",
            estimate::flushes_word(sum.unnamed)
        );
    }
    if saved.is_some() {
        let _ = writeln!(out, "  {}", estimate::how());
    }
    if sum.unreadable > 0 || torn > 0 {
        let _ = writeln!(
            out,
            "  Left out: {} line(s) of containers' report files that were not report lines, {} line(s) of the account that were not whole records.",
            grouped(sum.unreadable),
            grouped(torn)
        );
    }
    out.push_str(&listed(records));
    let _ = writeln!(out, "  {NOT_COUNTED}");
    out
}

/// A cell of a Markdown table: what an engine named, shown as text,
/// whatever the account file holds (it is not trusted to have been
/// written bounded): a control character, or one that changes how the
/// text reads unseen (`shown::unseen`), as `?` too.
fn cell(text: &str) -> String {
    if text.is_empty() {
        return "–".to_owned();
    }
    let mut out = String::from("`");
    out.extend(text.chars().map(|c| match c {
        '`' | '|' | '\\' | '<' | '>' => '?',
        c if c.is_control() || shown::unseen(c) => '?',
        c => c,
    }));
    out.push('`');
    out
}

fn markdown(sum: &Sum, records: &[Record], timed: &[Timed], since: Option<i64>) -> String {
    let saved = saved(timed).map_or_else(
        || "not estimated".to_owned(),
        |saved| format!("about {}", saved.words()),
    );
    let mut out = String::from("### eatmydata: what the runtime saved\n\n");
    out.push_str("| Containers served | Flushes skipped | Time saved (estimate) |\n");
    out.push_str("| ---: | ---: | ---: |\n");
    let _ = writeln!(
        out,
        "| {} | {} | {saved} |\n",
        grouped(sum.containers),
        grouped(sum.flushes)
    );
    if !records.is_empty() {
        out.push_str("| Container | Name | Image | Processes | Flushes skipped |\n");
        out.push_str("| --- | --- | --- | ---: | ---: |\n");
        for record in busiest(records) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                cell(&short_id(record)),
                cell(&record.name),
                cell(&record.image),
                grouped(record.processes),
                grouped(record.flushes_skipped())
            );
        }
        if records.len() > SHOWN {
            let _ = writeln!(out, "\n{} more containers.", grouped(more(records)));
        }
        out.push('\n');
        out.push_str(&mounts_table(records));
    }
    for one in timed {
        let _ = writeln!(
            out,
            "- {}",
            shown::markup_free(one.line().trim_end().trim_start_matches("eatmydata: "))
        );
    }
    if !timed.is_empty() {
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "Containers counted as each run ended (docker stop or its command's end, not docker rm){}. {} {NOT_COUNTED}",
        since_words(since),
        if saved.starts_with("about") {
            estimate::how()
        } else {
            String::new()
        }
    );
    out
}

/// The Markdown table of the busiest containers' flushes by mount
/// destination, eaten and kept; nothing when none names a mount.
fn mounts_table(records: &[Record]) -> String {
    let mut rows = String::new();
    let mut keeping = false;
    for record in busiest(records) {
        keeping |= !record.keeps.is_empty();
        for mount in on_mounts(record).iter().take(MOUNTS_SHOWN) {
            let kept = mount.kept.map_or_else(|| "not counted".to_owned(), grouped);
            let _ = writeln!(
                rows,
                "| {} | {} | {} | {kept} |",
                cell(&short_id(record)),
                cell(mount.on),
                grouped(mount.eaten)
            );
        }
    }
    if rows.is_empty() {
        return rows;
    }
    let mut out = String::from("| Container | Mount | Flushes eaten | Flushes kept |\n");
    out.push_str("| --- | --- | ---: | ---: |\n");
    out.push_str(&rows);
    if keeping {
        let _ = writeln!(
            out,
            "\nWhere a container keeps a mount, {KEPT_NOT_COUNTED}."
        );
    }
    out.push('\n');
    out
}

fn skips_object(skips: &Counts) -> Map<String, Value> {
    SKIPS
        .iter()
        .zip(skips)
        .map(|((_, key, _), count)| ((*key).to_owned(), json!(count)))
        .collect()
}

fn json_of(
    sum: &Sum,
    records: &[Record],
    timed: &[Timed],
    since: Option<i64>,
    torn: u64,
) -> String {
    let containers: Vec<Value> = records
        .iter()
        .map(|record| {
            let mut value: Value =
                serde_json::from_str(record.to_line().trim_end()).unwrap_or(Value::Null);
            if let Some(object) = value.as_object_mut() {
                let mounts: Vec<Value> = on_mounts(record)
                    .iter()
                    .map(|m| json!({"on": m.on, "eaten": m.eaten, "kept": m.kept}))
                    .collect();
                object.insert("by_mount".into(), mounts.into());
                let leaves_out = (!record.keeps.is_empty()).then_some(KEPT_NOT_COUNTED);
                object.insert("kept_not_counted".into(), json!(leaves_out));
            }
            value
        })
        .collect();
    let file_systems: Vec<Value> = timed
        .iter()
        .map(|one| {
            json!({
                "on": one.name(),
                "flushes": one.count,
                "flushes_timed": one.spread().map(|s| s.timed),
                "flush_seconds": one.spread().map(|s| s.typical.as_secs_f64()),
                "flush_seconds_low": one.spread().map(|s| s.low.as_secs_f64()),
                "flush_seconds_high": one.spread().map(|s| s.high.as_secs_f64()),
                "saved_seconds": one.saved().map(|s| s.typical.as_secs_f64()),
                "saved_seconds_low": one.saved().map(|s| s.low.as_secs_f64()),
                "saved_seconds_high": one.saved().map(|s| s.high.as_secs_f64()),
            })
        })
        .collect();
    let value = json!({
        "since": since.map(time::format),
        "containers": containers,
        "total": {
            "containers": sum.containers,
            "processes": sum.processes,
            "skips": skips_object(&sum.skips),
            "flushes_skipped": sum.flushes,
            "flushes_unnamed": sum.unnamed,
            "unreadable_report_lines": sum.unreadable,
            "barrier_flushes": sum.barrier,
            "flushes_kept": sum.kept,
        },
        "estimate": {
            "saved_seconds": saved(timed).map(|s| s.typical.as_secs_f64()),
            "saved_seconds_low": saved(timed).map(|s| s.low.as_secs_f64()),
            "saved_seconds_high": saved(timed).map(|s| s.high.as_secs_f64()),
            "file_systems": file_systems,
            "how": estimate::how(),
        },
        "unreadable_account_lines": torn,
        "not_counted": NOT_COUNTED,
    });
    let mut out = serde_json::to_string_pretty(&value).unwrap_or_default();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::super::record::tests::example;
    use super::*;

    /// What an engine named reaches a Markdown cell as text, whatever the
    /// account file holds: a bidi override, a zero-width space, a control
    /// character are `?` (security review 3, issue 45: they reached the
    /// summary, and `cell` trusted the file to be written bounded).
    #[test]
    fn a_cell_shows_no_character_that_changes_how_it_reads() {
        assert_eq!(cell("db\u{202e}gpj.exe"), "`db?gpj.exe`");
        assert_eq!(cell("a\u{200b}b\u{2066}c\u{1b}[2J"), "`a?b?c?[2J`");
        assert_eq!(cell("x|`y`"), "`x??y?`");
        assert_eq!(
            super::super::record::bounded("postgres\u{202e}\u{feff}:16"),
            "postgres??:16"
        );
    }

    #[test]
    fn the_line_is_read_strictly() {
        let now = 1_000_000;
        let read = |args: &[&str]| parse(&args.iter().map(OsString::from).collect::<Vec<_>>(), now);
        assert_eq!(
            read(&["--since", "2h", "--json"]),
            Ok(Asked {
                since: Some(now - 7200),
                format: Format::Json
            })
        );
        assert_eq!(
            read(&["--since=1970-01-01T00:00:10Z"]).unwrap().since,
            Some(10)
        );
        assert_eq!(read(&["--markdown"]).unwrap().format, Format::Markdown);
        assert!(read(&["--json", "--markdown"]).is_err());
        assert!(read(&["--since"]).is_err());
        assert!(read(&["--since", "yesterday"]).is_err());
        assert!(read(&["--csv"]).is_err());
    }

    #[test]
    fn records_are_summed_by_kind_and_file_system() {
        let (a, mut b) = (example("a", 10), example("b", 5));
        b.flushes[0].on = String::new();
        b.unreadable = 2;
        let sum = sum(&[a, b]);
        assert_eq!(sum.containers, 2);
        assert_eq!(sum.processes, 6);
        assert_eq!(sum.skips, [15, 2, 4, 6, 8, 10, 12]);
        assert_eq!(sum.flushes, 15 + 2 + 6 + 10);
        assert_eq!(
            sum.by_device[&(7, 3)],
            (15, "/mnt (ext4 on loop3)".to_owned())
        );
        assert_eq!((sum.unnamed, sum.unreadable), (2, 2));
    }

    #[test]
    fn the_markdown_gives_the_three_figures_and_shows_names_as_text() {
        let mut a = example("0123456789abcdef", 1000);
        a.name = "x|<img src=y>`".to_owned();
        let records = [a];
        let out = markdown(&sum(&records), &records, &[], None);
        assert!(out.contains("| 1 | 1,009 | not estimated |"), "{out}");
        assert!(
            out.contains("| `0123456789ab` | `x??img src=y??` | `postgres:16` | 3 | 1,009 |"),
            "{out}"
        );
        assert!(out.contains("static and Go programs"), "{out}");
    }

    #[test]
    fn the_text_lists_each_container_by_name_and_image() {
        let mut a = example("0123456789abcdef", 1000);
        a.name = "named-db".to_owned();
        let mut b = example("fedcba9876543210", 1);
        (b.name, b.image) = (String::new(), String::new());
        let records = [b, a];
        let out = text(&sum(&records), &records, &[], None, Path::new("/a"), 0);
        let listed: Vec<&str> = out
            .lines()
            .skip_while(|l| !l.starts_with("  containers, busiest first:"))
            .skip(1)
            // Each container's mounts are listed under it, further in.
            .filter(|l| !l.starts_with("      "))
            .take(2)
            .collect();
        assert_eq!(
            listed,
            [
                "    named-db  postgres:16  0123456789ab  3 processes, 1,009 flushes skipped",
                "    –  –  fedcba987654  3 processes, 10 flushes skipped",
            ],
            "{out}"
        );
    }

    #[test]
    fn a_container_whose_list_could_not_be_read_is_named() {
        let said = r#"EATMYDATA_KEEP entry "data" is relative: every sync is kept"#;
        let mut a = example("0123456789abcdef", 0);
        a.unread = Some(said.to_owned());
        let records = [a, example("fedcba9876543210", 90)];
        let out = text(&sum(&records), &records, &[], None, Path::new("/a"), 0);
        assert!(
            out.contains(&format!("\n  kept every sync    0123456789ab db: {said}\n")),
            "{out}"
        );
        assert!(out.contains(&format!("\n      {said}\n")), "{out}");
        assert_eq!(out.matches("kept every sync ").count(), 1, "{out}");
        let json: Value =
            serde_json::from_str(&json_of(&sum(&records), &records, &[], None, 0)).unwrap();
        assert_eq!(json["containers"][0]["unread"], json!(said));
    }

    #[test]
    fn each_container_shows_its_mounts_eaten_and_kept() {
        let mut a = example("0123456789abcdef", 100);
        a.kept_by_mount = Some(vec![("/keep".to_owned(), 98)]);
        a.kept_unnamed = 0;
        let mut control = example("fedcba9876543210", 90);
        (control.kept_by_mount, control.keeps) = (Some(vec![]), vec![]);
        control.kept_unnamed = 0;
        let mut older = example("0000000000000000", 5);
        (older.kept_by_mount, older.keeps) = (None, vec![]);
        older.kept_unnamed = 0;
        let records = [a, control, older];
        assert_eq!(
            on_mounts(&records[0]),
            [
                OnMount {
                    on: "/data",
                    eaten: 100,
                    kept: Some(0)
                },
                OnMount {
                    on: "/keep",
                    eaten: 0,
                    kept: Some(98)
                },
            ]
        );
        let out = text(&sum(&records), &records, &[], None, Path::new("/a"), 0);
        for expected in [
            "  kept by mount      /keep 98 (reached the disk: 98 flushes in all)\n",
            "    db  postgres:16  0123456789ab  3 processes, 109 flushes skipped\n      /data  eaten 100, kept 0\n      /keep  eaten 0, kept 98\n      keeps /keep (kept counts are of dynamic programs",
            "    db  postgres:16  fedcba987654  3 processes, 99 flushes skipped\n      /data  eaten 90, kept 0\n    db",
            "      /data  eaten 5, kept not counted\n",
        ] {
            assert!(out.contains(expected), "{expected}\n{out}");
        }
        let json: Value =
            serde_json::from_str(&json_of(&sum(&records), &records, &[], None, 0)).unwrap();
        let by = |at: usize| json["containers"][at]["by_mount"].clone();
        assert_eq!(
            by(0),
            json!([{"on": "/data", "eaten": 100, "kept": 0}, {"on": "/keep", "eaten": 0, "kept": 98}])
        );
        assert_eq!(by(1), json!([{"on": "/data", "eaten": 90, "kept": 0}]));
        assert_eq!(by(2), json!([{"on": "/data", "eaten": 5, "kept": null}]));
        assert!(
            json["containers"][0]["kept_not_counted"]
                .as_str()
                .unwrap()
                .contains("static")
        );
        assert!(json["containers"][1]["kept_not_counted"].is_null());
        assert_eq!(json["total"]["flushes_kept"], 98);
        let md = markdown(&sum(&records), &records, &[], None);
        assert!(md.contains("| `0123456789ab` | `/keep` | 0 | 98 |"), "{md}");
        assert!(
            md.contains("| `000000000000` | `/data` | 5 | not counted |"),
            "{md}"
        );
    }

    #[test]
    fn a_mount_a_container_named_is_shown_as_text() {
        let mut a = example("a", 1);
        a.kept_by_mount = Some(vec![("/k\u{1b}[2J<b>|".to_owned(), 3)]);
        let records = [a];
        let md = markdown(&sum(&records), &records, &[], None);
        assert!(md.contains("| `a` | `/k?[2J?b??` | 0 | 3 |"), "{md}");
    }

    #[test]
    fn the_json_gives_each_container_under_the_librarys_names() {
        let records = [example("a", 4)];
        let out = json_of(&sum(&records), &records, &[], None, 1);
        let value: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(value["containers"][0]["id"], "a");
        assert_eq!(value["containers"][0]["skips"]["fsync"], 4);
        assert_eq!(value["total"]["flushes_skipped"], 4 + 1 + 3 + 5);
        assert_eq!(value["unreadable_account_lines"], 1);
        assert!(value["estimate"]["saved_seconds"].is_null());
        assert!(value["not_counted"].as_str().unwrap().contains("Go"));
    }
}
