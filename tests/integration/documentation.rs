//! The documentation holds together: the README stays a page a newcomer
//! reads (at most 300 lines), each page of `docs/` opens with its title and
//! a two-line summary, and every relative link of the README, `docs/`,
//! CONTRIBUTING.md and SECURITY.md names a file that exists, and a heading
//! of it when it names one. A page moved or a heading renamed fails here.
//! And the shell lines a newcomer types work the first time in the ways a
//! walk through them found broken: what needs root has `sudo`, podman is
//! given an image's full name, a database image its password variable.

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

/// The commands of the page's `sh` blocks, continuation lines joined and
/// comments dropped, each with its line and whether the paragraph just
/// before or after the block says they run as root.
fn typed(text: &str) -> Vec<(usize, bool, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut start = None;
    let mut command = String::new();
    for (n, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("```") {
            start = match start {
                None if line.trim() == "```sh" => Some(n),
                _ => None,
            };
            continue;
        }
        let Some(open) = start else { continue };
        command.push_str(line.split(" # ").next().unwrap_or_default());
        if command.ends_with('\\') {
            command.pop();
            continue;
        }
        let end = n + lines[n..]
            .iter()
            .position(|l| l.starts_with("```"))
            .unwrap_or(0);
        let near = |range: std::ops::Range<usize>| {
            let range = range.start.min(lines.len())..range.end.min(lines.len());
            lines[range].join(" ").to_lowercase().contains("as root")
        };
        let as_root = near(open.saturating_sub(3)..open) || near(end + 1..end + 4);
        if !command.trim().is_empty() {
            found.push((n + 1, as_root, command.trim().to_owned()));
        }
        command.clear();
    }
    found
}

/// What would fail in `command` typed as it is, if anything.
fn fails_as_typed(command: &str, as_root: bool) -> Option<&'static str> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let has = |what: &str| command.contains(what);
    let root_verb = ["configure", "install", "uninstall", "report"]
        .iter()
        .any(|verb| has(&format!("eatmydata-runtime {verb}")))
        || has("--runtime configure");
    if root_verb && !as_root && words.first() != Some(&"sudo") {
        return Some("needs root: begin it with sudo");
    }
    let runs = ["run", "create"]
        .iter()
        .any(|verb| has(&format!("docker {verb}")) || has(&format!("podman {verb}")));
    let short = |word: &&str| {
        let (name, tag) = word.split_once(':').unwrap_or_default();
        !name.is_empty() && !tag.is_empty() && !word.contains(['/', '=', '"', '$'])
    };
    if runs && has("podman ") && words.iter().any(short) {
        return Some("podman needs the image's full name (docker.io/library/...)");
    }
    if runs && has("postgres:") && !has("POSTGRES_PASSWORD") && !has("POSTGRES_HOST_AUTH") {
        return Some("the postgres image refuses to start without POSTGRES_PASSWORD");
    }
    let mariadb = has("mariadb:") || has("mysql:");
    let password = ["ROOT_PASSWORD", "ALLOW_EMPTY", "RANDOM_ROOT"]
        .iter()
        .any(|v| has(v));
    if runs && mariadb && !password {
        return Some("the mariadb image refuses to start without MARIADB_ROOT_PASSWORD");
    }
    None
}

#[test]
fn what_a_newcomer_types_works_the_first_time() {
    // Controls: each rule catches what it is for, on lines made for it.
    let page = "Text.\n\n```sh\neatmydata-runtime report   # the account\n\
                podman run -d mariadb:11\ndocker run \\\n  postgres:16\n```\n";
    let found: Vec<_> = typed(page)
        .iter()
        .map(|(n, root, c)| (*n, fails_as_typed(c, *root).is_some()))
        .collect();
    assert_eq!(found, [(4, true), (5, true), (7, true)]);
    assert!(fails_as_typed("sudo eatmydata-runtime report", false).is_none());
    assert!(fails_as_typed("eatmydata-runtime install", true).is_none());
    let full = "podman run -e MARIADB_ROOT_PASSWORD=t docker.io/library/mariadb:11";
    assert!(fails_as_typed(full, false).is_none());

    let mut wrong = Vec::new();
    let mut seen = 0;
    for page in pages() {
        for (line, as_root, command) in typed(&fs::read_to_string(&page).unwrap()) {
            seen += 1;
            if let Some(why) = fails_as_typed(&command, as_root) {
                wrong.push(format!("{}:{line}: {command}: {why}", page.display()));
            }
        }
    }
    assert!(seen > 50, "only {seen} commands found");
    assert!(wrong.is_empty(), "fails as typed:\n{}", wrong.join("\n"));
}
