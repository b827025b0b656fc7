//! `eatmydata --report`: what the library skipped in the command and in
//! everything it started, told when the command has finished.
//!
//! The command runs with `EATMYDATA_REPORT` naming a private file; each
//! process under the library appends one line to it at exit (see
//! `src/preload/report.rs`). Here the file is read and summed up by
//! program.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::estimate;
use crate::keep;
use crate::protocol::{self, Counts, Device, SKIPS};

/// The variable that names the report file to the library.
pub const VARIABLE: &str = protocol::REPORT;

/// The flushes every process skipped, by file system, and those where
/// none could be named.
#[derive(Debug, Default, PartialEq)]
pub struct Flushes {
    pub on: BTreeMap<Device, u64>,
    pub unnamed: u64,
}

/// The flushes that the `lines` the processes appended say they skipped.
pub fn flushes(lines: &str) -> Flushes {
    let mut sum = Flushes::default();
    for line in lines.lines().filter_map(protocol::parse_report) {
        for &(device, count) in line.flushes.on() {
            *sum.on.entry(device).or_default() += count;
        }
        sum.unnamed += line.flushes.unnamed;
    }
    sum
}

/// The table a user reads, from the `lines` the processes appended to the
/// report file: per program, the processes that reported and what they
/// skipped; the busiest first, then a total; and each keep list that could
/// not be read (so every sync was kept): `own`, the command's reading
/// (`keep::scope`), then those the lines name.
pub fn summarize(lines: &str, seccomp: bool, own: Option<&str>) -> String {
    let mut programs: BTreeMap<&str, (u64, Counts)> = BTreeMap::new();
    let mut total: (u64, Counts) = (0, [0; SKIPS.len()]);
    let mut kept = 0u64;
    let mut unread: Vec<String> = own.into_iter().map(str::to_owned).collect();
    for line in lines.lines().filter_map(protocol::parse_report) {
        if let Some(said) = line.unread.map(keep::said_of)
            && !unread.contains(&said)
        {
            unread.push(said);
        }
        let on = line.kept.on().iter().map(|(_, count)| *count);
        kept = on.fold(kept.saturating_add(line.kept.unnamed), u64::saturating_add);
        let entry = programs.entry(line.name).or_default();
        for (sum, count) in [&mut entry.1, &mut total.1]
            .into_iter()
            .flat_map(|s| s.iter_mut().zip(line.counts))
        {
            *sum += count;
        }
        entry.0 += 1;
        total.0 += 1;
    }
    let mut out = String::new();
    for said in unread.iter().take(8) {
        let _ = writeln!(out, "eatmydata: report: {said}");
    }
    if total.0 == 0 {
        out.push_str("eatmydata: report: no process under the library reported (none loaded it, or all ended by _exit, exec or a signal)");
        out.push_str(if seccomp {
            "; the seccomp filter's answers are not counted\n"
        } else {
            "\n"
        });
        return out;
    }
    let mut rows: Vec<(&str, (u64, Counts))> = programs.into_iter().collect();
    rows.sort_by_key(|(_, (_, counts))| std::cmp::Reverse(counts.iter().sum::<u64>()));
    let _ = writeln!(
        out,
        "eatmydata: report: what the library skipped, by program"
    );
    let heading = SKIPS.iter().map(|(_, _, heading)| *heading);
    out.push_str(&row("program", "processes", heading.map(str::to_owned)));
    // The programs that skipped something, busiest first; the rest in a line.
    let (busy, idle): (Vec<_>, Vec<_>) = rows
        .iter()
        .partition(|(_, (_, counts))| counts.iter().any(|&c| c > 0));
    for (name, (processes, counts)) in busy.iter().take(12) {
        out.push_str(&row(
            name,
            &estimate::grouped(*processes),
            counts.iter().copied().map(estimate::grouped),
        ));
    }
    if busy.len() > 12 {
        let _ = writeln!(out, "  ({} more programs)", busy.len() - 12);
    }
    if !idle.is_empty() {
        let processes: u64 = idle.iter().map(|(_, (processes, _))| processes).sum();
        let names: Vec<&str> = idle.iter().map(|(name, _)| *name).collect();
        let mut names = names.join(", ");
        if names.len() > 60 {
            let mut cut = 57;
            while !names.is_char_boundary(cut) {
                cut -= 1;
            }
            names.truncate(cut);
            names.push_str("...");
        }
        let programs = idle.len();
        let _ = writeln!(
            out,
            "  no skips in: {names} ({programs} program{}, {processes} process{})",
            if programs == 1 { "" } else { "s" },
            if processes == 1 { "" } else { "es" },
        );
    }
    out.push_str(&row(
        "all",
        &estimate::grouped(total.0),
        total.1.iter().copied().map(estimate::grouped),
    ));
    if kept > 0 {
        let _ = writeln!(
            out,
            "  kept: {} on the kept mounts (--keep, --only) reached the disk",
            estimate::flushes_word(kept)
        );
    }
    if seccomp {
        out.push_str("  (the seccomp filter's answers are not counted)\n");
    }
    out.push_str("  Processes that end by _exit, exec or a signal, or run as another user, are not counted.\n");
    out
}

fn row(name: &str, processes: &str, counts: impl Iterator<Item = String>) -> String {
    let mut line = format!("  {name:<16} {processes:>9}");
    for (count, (_, _, heading)) in counts.zip(SKIPS) {
        let _ = write!(line, "  {count:>width$}", width = heading.len());
    }
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flushes_kept_are_told_beside_the_skips() {
        let lines = "\
pid=1 name=pg fsync=3 sync=0 range=0 msync=0 open=0 write=0 direct=0 flushes_on=7:3:3 flushes_unnamed=0 kept_on=7:4:100,8:1:2 kept_unnamed=1
pid=2 name=sh fsync=0 sync=0 range=0 msync=0 open=0 write=0 direct=0
";
        let summary = summarize(lines, false, None);
        assert!(
            summary.contains(
                "\n  kept: 103 flushes on the kept mounts (--keep, --only) reached the disk\n"
            ),
            "{summary}"
        );
        let none = summarize(
            "pid=2 name=sh fsync=1 kept_on= kept_unnamed=0\n",
            false,
            None,
        );
        assert!(!none.contains("kept"), "{none}");
    }

    #[test]
    fn a_list_that_could_not_be_read_is_named() {
        let lines = "\
pid=1 name=pg fsync=0 kept_on=7:4:100 kept_unnamed=0 unread=keep:relative:data
pid=2 name=sh fsync=0 kept_on=7:4:1 kept_unnamed=0 unread=keep:relative:data
pid=3 name=sh fsync=0 kept_on= kept_unnamed=0 unread=only:no-mount:/gone
";
        let own = r#"EATMYDATA_KEEP entry "data" is relative: every sync is kept"#;
        let summary = summarize(lines, false, Some(own));
        assert!(
            summary.starts_with(&format!(
                "eatmydata: report: {own}\neatmydata: report: EATMYDATA_ONLY entry \"/gone\" names no mount: every sync is kept\neatmydata: report: what"
            )),
            "{summary}"
        );
        let alone = summarize("", true, Some(own));
        assert!(
            alone.starts_with(&format!("eatmydata: report: {own}\n")),
            "{alone}"
        );
    }

    #[test]
    fn lines_are_summed_by_program_busiest_first() {
        let lines = "\
pid=1 name=sh fsync=0 sync=0 range=0 msync=0 open=0 write=0 direct=0
pid=2 name=sqlite3 fsync=4004 sync=0 range=0 msync=0 open=1 write=0 direct=0
pid=3 name=sqlite3 fsync=4 sync=1 range=0 msync=0 open=0 write=0 direct=2
garbage
";
        let summary = summarize(lines, false, None);
        let rows: Vec<&str> = summary.lines().collect();
        assert_eq!(
            rows[0],
            "eatmydata: report: what the library skipped, by program"
        );
        assert!(rows[1].starts_with("  program          processes  fsync  sync  sync_file_range"));
        assert!(
            rows[2].starts_with("  sqlite3                  2  4,008     1"),
            "{summary}"
        );
        assert_eq!(
            rows[3], "  no skips in: sh (1 program, 1 process)",
            "{summary}"
        );
        assert!(
            rows[4].starts_with("  all                      3  4,008     1"),
            "{summary}"
        );
        assert!(
            rows[4].ends_with("             1                0         2"),
            "{summary}"
        );
    }

    #[test]
    fn flushes_are_summed_by_file_system() {
        let lines = "\
pid=1 name=sh fsync=0 sync=0 range=0 msync=0 open=0 write=0 direct=0
pid=2 name=sqlite3 fsync=3 sync=1 range=0 msync=0 open=1 write=0 direct=0 flushes_on=7:3:3 flushes_unnamed=1
pid=3 name=dpkg fsync=5 sync=0 range=0 msync=0 open=0 write=0 direct=0 flushes_on=254:0:1,7:3:4 flushes_unnamed=0
";
        let sum = flushes(lines);
        assert_eq!(
            sum.on.into_iter().collect::<Vec<_>>(),
            [((7, 3), 7), ((254, 0), 1)]
        );
        assert_eq!(sum.unnamed, 1);
    }

    #[test]
    fn no_line_says_the_library_never_ran() {
        assert_eq!(
            summarize("", true, None),
            "eatmydata: report: no process under the library reported (none loaded it, or all ended by _exit, exec or a signal); the seccomp filter's answers are not counted\n"
        );
    }
}
