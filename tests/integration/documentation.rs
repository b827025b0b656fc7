//! The documentation holds together: the README stays a page a newcomer
//! reads (at most 300 lines), each page of `docs/` opens with its title and
//! a two-line summary, and every relative link of the README, `docs/`,
//! CONTRIBUTING.md and SECURITY.md names a file that exists, and a heading
//! of it when it names one. A page moved or a heading renamed fails here.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown pages a reader is sent to: the top-level ones and docs/.
fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "SECURITY.md"]
        .iter()
        .map(|name| root().join(name))
        .collect();
    for dir in ["docs", "docs/benchmarks"] {
        let mut found: Vec<PathBuf> = fs::read_dir(root().join(dir))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "md"))
            .collect();
        found.sort();
        pages.extend(found);
    }
    pages
}

/// The targets of the inline links `[text](target)` of `text`, outside
/// code blocks and code spans.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Drop code spans: `[a](b)` inside backquotes is not a link.
        let plain: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    found
}

/// GitHub's anchor for a heading: lower case, spaces to `-`, and only
/// letters, digits, `-` and `_` kept.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings, outside code blocks.
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            found.push(anchor(line.trim_start_matches('#')));
        }
    }
    found
}

/// What is wrong with the link `target` from the page `from`, if anything.
fn broken(from: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (file, fragment) = match target.split_once('#') {
        Some((file, fragment)) => (file, Some(fragment)),
        None => (target, None),
    };
    let path = if file.is_empty() {
        from.to_path_buf()
    } else {
        from.parent().unwrap().join(file)
    };
    if !path.exists() {
        return Some(format!("{target}: no {}", path.display()));
    }
    let fragment = fragment?;
    let text = fs::read_to_string(&path).ok()?;
    if anchors(&text).iter().any(|a| a == fragment) {
        None
    } else {
        Some(format!(
            "{target}: no heading #{fragment} in {}",
            path.display()
        ))
    }
}

#[test]
fn the_checks_see_links_headings_and_what_is_broken() {
    // Controls for the scans below, on text made for them.
    let text = "# A `--b` title: c\n\n[x](y.md#a---b-title-c) `[no](z)`\n```\n[no](w)\n```\n[u](https://e)";
    assert_eq!(links(text), ["y.md#a---b-title-c", "https://e"]);
    assert_eq!(anchors(text), ["a---b-title-c"]);
    let readme = root().join("README.md");
    assert!(broken(&readme, "docs/no-such-page.md").is_some());
    assert!(broken(&readme, "#no-such-heading").is_some());
    assert!(broken(&readme, "#usage").is_none());
    assert!(broken(&readme, "docs/benchmarks.md#per-call-cost").is_none());
}

#[test]
fn every_relative_link_names_a_file_and_heading_that_exist() {
    let mut wrong = Vec::new();
    let mut seen = 0;
    for page in pages() {
        let text = fs::read_to_string(&page).unwrap();
        for target in links(&text) {
            seen += 1;
            if let Some(why) = broken(&page, &target) {
                wrong.push(format!("{}: {why}", page.display()));
            }
        }
    }
    assert!(seen > 50, "only {seen} links found");
    assert!(wrong.is_empty(), "broken links:\n{}", wrong.join("\n"));
}

#[test]
fn the_readme_is_at_most_300_lines() {
    let lines = fs::read_to_string(root().join("README.md"))
        .unwrap()
        .lines()
        .count();
    assert!(lines <= 300, "README.md has {lines} lines");
}

#[test]
fn each_page_of_docs_opens_with_a_title_and_a_two_line_summary() {
    for page in pages() {
        let in_docs = page.parent() == Some(&root().join("docs"));
        if !in_docs {
            continue;
        }
        let text = fs::read_to_string(&page).unwrap();
        let head: Vec<&str> = text.lines().take(5).collect();
        let summary_ends = head.get(4).is_none_or(|line| line.is_empty());
        assert!(
            head.len() >= 4
                && head[0].starts_with("# ")
                && head[1].is_empty()
                && !head[2].is_empty()
                && !head[3].is_empty()
                && summary_ends,
            "{} does not open with a title and a two-line summary:\n{}",
            page.display(),
            head.join("\n")
        );
    }
}
