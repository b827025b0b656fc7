//! The man page, eatmydata(1), and the README's options table keep up with
//! `--help`: every long option and every `EATMYDATA_*` variable the help
//! lists is documented in both, and neither's list of options names one
//! the command does not know. A new option without an entry fails here.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::command;

/// The words of `text` that start with `prefix` and go on with letters,
/// digits, `-` or `_`.
fn words(text: &str, prefix: &str) -> BTreeSet<String> {
    scan(text, prefix, "-_").into_iter().collect()
}

/// The words of `text` that start with `prefix` and go on with letters,
/// digits or any of `also`, in order, repeats kept.
fn scan(text: &str, prefix: &str, also: &str) -> Vec<String> {
    let is_part = |c: char| c.is_ascii_alphanumeric() || also.contains(c);
    text.match_indices(prefix)
        .filter(|(at, _)| !text[..*at].ends_with(is_part))
        .map(|(at, _)| {
            let rest = &text[at + prefix.len()..];
            let end = rest.find(|c: char| !is_part(c)).unwrap_or(rest.len());
            format!("{prefix}{}", rest[..end].trim_end_matches('-'))
        })
        .filter(|word| word.len() > prefix.len())
        .collect()
}

fn help() -> String {
    let output = Command::new(command()).arg("--help").output().unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap()
}

/// A file of the source tree.
fn source(path: &str) -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The page's source with roff's escaped hyphens made plain.
fn page() -> String {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/eatmydata.1");
    fs::read_to_string(source).unwrap().replace("\\-", "-")
}

#[test]
fn the_man_page_documents_every_option_and_variable_of_help() {
    let (help, page) = (help(), page());
    let options = words(&help, "--");
    // Control: the scan finds the options we know are there.
    for known in ["--help", "--version", "--report", "--no-seccomp"] {
        assert!(
            options.contains(known),
            "{known} not found in --help: {options:?}"
        );
    }
    let variables = words(&help, "EATMYDATA_");
    assert!(variables.contains("EATMYDATA_LIBRARY"), "{variables:?}");
    // Examples show other programs' options: only the OPTIONS section counts.
    let section = page
        .split_once(".SH OPTIONS")
        .and_then(|(_, rest)| rest.split(".SH ").next())
        .expect("an OPTIONS section");
    let page_options = words(section, "--");
    for name in options.iter().chain(&variables) {
        assert!(
            page.contains(name.as_str()),
            "{name} is in --help but not in docs/eatmydata.1"
        );
    }
    for name in &page_options {
        assert!(
            options.contains(name),
            "docs/eatmydata.1 documents {name}, which --help does not list"
        );
    }
}

/// `eatmydata profile --help` and the page's section on it name the same
/// options.
#[test]
fn the_man_page_documents_the_profiles_options() {
    let output = Command::new(command())
        .args(["profile", "--help"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    let page = page();
    let section = page
        .split_once(".SH THE SECCOMP PROFILE")
        .and_then(|(_, rest)| rest.split(".SH ").next())
        .expect("a section THE SECCOMP PROFILE");
    // Both quote docker's own option; --help is the page's to skip.
    let not_ours = |name: &String| name != "--security-opt" && name != "--help";
    let options: Vec<String> = words(&help, "--").into_iter().filter(not_ours).collect();
    let documented: Vec<String> = words(section, "--").into_iter().filter(not_ours).collect();
    // Control: the scan finds what is there.
    assert!(
        options.contains(&"--engine-version".to_owned()),
        "{options:?}"
    );
    assert_eq!(documented, options);
}

#[test]
fn the_man_page_renders_without_warnings() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/eatmydata.1");
    let output = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(&source)
        .env("MANWIDTH", "80")
        .env("LC_ALL", "C.UTF-8")
        .output()
        .expect("run man (scripts/setup-test-deps installs man-db)");
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.is_empty(), "man --warnings: {stderr}");
    let text = String::from_utf8_lossy(&output.stdout);
    for section in [
        "SYNOPSIS",
        "OPTIONS",
        "ENVIRONMENT",
        "EXIT STATUS",
        "EXAMPLES",
    ] {
        assert!(text.contains(section), "no {section} section");
    }
}

/// The README's options table, between its markers, and the README.
fn readme_options() -> (String, String) {
    let readme = source("README.md");
    let table = readme
        .split_once("<!-- options:")
        .and_then(|(_, rest)| rest.split_once("<!-- /options -->"))
        .map(|(table, _)| table.to_owned())
        .expect("README.md marks its options table with <!-- options: ... <!-- /options -->");
    (table, readme)
}

#[test]
fn the_readme_options_table_lists_every_option_of_help_once() {
    let help = help();
    let (table, readme) = readme_options();
    // `--seccomp=plain` is an option of its own, beside `--seccomp`.
    let options: BTreeSet<String> = scan(&help, "--", "-_=").into_iter().collect();
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("| `-")).collect();
    // Control: the scan sees the table's rows, and both spellings.
    assert!(rows.len() >= 8, "only {} option rows: {table}", rows.len());
    assert!(options.contains("--seccomp=plain"), "{options:?}");
    let mut listed = Vec::new();
    for row in &rows {
        // The first cell names the options; the second may mention others.
        let first = row.split('|').nth(1).unwrap_or_default();
        listed.extend(scan(first, "--", "-_="));
    }
    for name in &options {
        let times = listed.iter().filter(|l| *l == name).count();
        assert_eq!(
            times, 1,
            "{name} is in --help and {times} times in the README's table"
        );
    }
    for name in &listed {
        assert!(
            options.contains(name),
            "the README's table lists {name}, which --help does not"
        );
    }
    for name in words(&help, "EATMYDATA_") {
        assert!(
            readme.contains(&name),
            "{name} is in --help but not in README.md"
        );
    }
}
