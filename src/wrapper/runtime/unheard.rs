//! A verb neither runc nor crun has (`eatmydata-runtime reprot`): an
//! engine may call one newer than our list, so it still goes to the real
//! runtime, with the line as given; but as a child, so that where the
//! real runtime refuses it one line more can say which verbs are this
//! command's own (and the nearest one), and, for a caller that is not
//! root, that these need root. The same child, with only that last word,
//! for a person who is not root typing one of runc's verbs (no engine
//! calls the runtime without `--root`).

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::Command;

use super::help;

/// Runs `runtime` (named `argv0`) with `args` and waits; its exit status,
/// 128 + N for a signal, as a shell tells it. `Err` when it cannot start.
/// A refusal is followed by [`refused`]'s line for an unheard `verb`, or
/// by the word for a caller who is not root.
pub fn run(
    runtime: &Path,
    argv0: &OsStr,
    args: &[OsString],
    verb: Option<&OsStr>,
) -> std::io::Result<i32> {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let status = Command::new(runtime).arg0(argv0).args(args).status()?;
    let code = status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    let said = match verb {
        _ if code == 0 => None,
        Some(verb) => Some(refused(&verb.to_string_lossy(), &argv0.to_string_lossy())),
        None => help::as_root().map(|hint| format!("eatmydata: {hint}")),
    };
    said.into_iter().for_each(|line| eprintln!("{line}"));
    Ok(code)
}

/// The line after the real runtime's refusal of `verb`.
pub fn refused(verb: &str, runtime: &str) -> String {
    let mut line = format!(
        "eatmydata: {runtime} does not know '{verb}' either; eatmydata-runtime's own \
         commands are {}",
        help::COMMANDS.join(", ")
    );
    if let Some(near) = nearest(verb) {
        line.push_str(&format!(" (did you mean {near}?)"));
    }
    line.push_str("; 'eatmydata-runtime --help' says more");
    if let Some(hint) = help::as_root() {
        line.push_str(&format!("; {hint}"));
    }
    line
}

/// Our command nearest to `verb`, within two edits (a transposition
/// counting as one: `reprot`).
fn nearest(verb: &str) -> Option<&'static str> {
    help::COMMANDS
        .iter()
        .map(|ours| (distance(verb, ours), *ours))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, ours)| ours)
}

/// The optimal string alignment distance between `a` and `b`.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // Row i starts at i (i deletions), row 0 is 0..=len(b) (insertions).
    let mut d: Vec<Vec<usize>> = (0..=a.len())
        .map(|i| match i {
            0 => (0..=b.len()).collect(),
            _ => std::iter::once(i)
                .chain(std::iter::repeat_n(0, b.len()))
                .collect(),
        })
        .collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_is_matched_to_our_nearest_command() {
        assert_eq!(nearest("reprot"), Some("report"));
        assert_eq!(nearest("configre"), Some("configure"));
        assert_eq!(nearest("unistall"), Some("uninstall"));
        assert_eq!(nearest("frobnicate"), None);
        let line = refused("reprot", "runc");
        assert!(
            line.starts_with("eatmydata: runc does not know 'reprot'"),
            "{line}"
        );
        assert!(line.contains("(did you mean report?)"), "{line}");
        assert!(!line.contains('\n'), "{line}");
    }
}
