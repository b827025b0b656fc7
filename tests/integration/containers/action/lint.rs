//! The Action's metadata and every workflow, as GitHub's own checker
//! reads them: actionlint (offline, from scripts/setup-test-deps' venv)
//! on `.github/workflows/*.yml` and on every workflow example in docs/,
//! in a copy of the repository where `uses:` of this action reads its
//! `action.yml` (`uses: ./`); any finding fails. actionlint itself is
//! checked first: the metadata as it was (a plain scalar holding `: `)
//! must give a finding. PyYAML and npm's `yaml` parse `action.yml`.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use super::{NODE_TOOLS, repository, said};
use crate::common::TempDir;

const VENV: &str = "/var/tmp/eatmydata-venv/bin";

/// actionlint's findings in the repository copy `root` (empty: none).
fn actionlint(root: &Path) -> String {
    let output: Output = Command::new(format!("{VENV}/actionlint"))
        .args(["-no-color", "-oneline"])
        .current_dir(root)
        .output()
        .unwrap_or_else(|e| panic!("{VENV}/actionlint: {e} (scripts/setup-test-deps installs it)"));
    match output.status.code() {
        Some(0) => String::new(),
        Some(1) => said(&output),
        _ => panic!("actionlint failed to run: {}", said(&output)),
    }
}

/// A repository copy with this action.yml and `workflows` (name, text).
fn copy(label: &str, metadata: &str, workflows: &[(String, String)]) -> TempDir {
    let dir = TempDir::new(label);
    let git = Command::new("git")
        .arg("init")
        .arg("-q")
        .arg(dir.path())
        .status();
    assert!(git.unwrap().success());
    fs::write(dir.join("action.yml"), metadata).unwrap();
    // actionlint checks that the entry points exist.
    fs::create_dir_all(dir.join("action")).unwrap();
    for entry in fs::read_dir(repository().join("action")).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            fs::copy(entry.path(), dir.join("action").join(entry.file_name())).unwrap();
        }
    }
    let folder = dir.join(".github/workflows");
    fs::create_dir_all(&folder).unwrap();
    for (name, text) in workflows {
        fs::write(folder.join(name), text).unwrap();
    }
    dir
}

/// The ```yaml blocks of `text` that are workflows or parts of one
/// (`jobs:`, `steps:`, `uses:`, `runs-on:`), each made whole: a `jobs:`
/// block gets a name and a trigger, a `steps:` block a job around it.
/// This action's `uses:` (OWNER/eatmydata@REF) reads `./action.yml`.
fn examples(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut block: Option<Vec<&str>> = None;
    for line in text.lines() {
        match (&mut block, line.trim_start()) {
            (None, "```yaml") => block = Some(Vec::new()),
            (Some(lines), "```") => {
                let body = lines.join("\n");
                block = None;
                let workflow = ["jobs:", "steps:", "uses:", "runs-on:"]
                    .iter()
                    .any(|key| body.contains(key));
                if !workflow {
                    continue;
                }
                let ours = body
                    .lines()
                    .map(|l| match l.split_once("uses: ") {
                        Some((indent, what)) if what.contains("/eatmydata@") => {
                            format!("{indent}uses: ./")
                        }
                        _ => l.to_owned(),
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                let whole = if ours.starts_with("steps:") {
                    let indented: Vec<String> = ours.lines().map(|l| format!("    {l}")).collect();
                    format!(
                        "name: example\non: push\njobs:\n  example:\n    runs-on: ubuntu-latest\n{}\n",
                        indented.join("\n")
                    )
                } else if ours.starts_with("jobs:") {
                    format!("name: example\non: push\n{ours}\n")
                } else {
                    format!("{ours}\n")
                };
                found.push(whole);
            }
            (Some(lines), _) => lines.push(line),
            (None, _) => {}
        }
    }
    found
}

#[test]
fn actionlint_finds_nothing_in_the_action_workflows_and_docs() {
    let metadata = fs::read_to_string(repository().join("action.yml")).unwrap();
    let mut workflows = Vec::new();
    for entry in fs::read_dir(repository().join(".github/workflows")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(name.ends_with(".yml"), "{name}: workflows end in .yml here");
        workflows.push((name, fs::read_to_string(&path).unwrap()));
    }
    assert!(
        workflows.iter().any(|(_, text)| text.contains("uses: ./")),
        "no workflow uses the action from this checkout: actionlint would not read action.yml"
    );
    let mut from_docs = 0;
    for entry in fs::read_dir(repository().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
            let text = fs::read_to_string(&path).unwrap();
            for (n, example) in examples(&text).into_iter().enumerate() {
                workflows.push((format!("docs-{stem}-{n}.yml"), example));
                from_docs += 1;
            }
        }
    }
    assert!(
        from_docs >= 3,
        "only {from_docs} workflow examples in docs/"
    );

    // The oracle: the metadata with a plain scalar holding ": ", as it
    // was, is a finding.
    let broken = metadata.replacen(
        "description: Docker's daemon.json.",
        "description: Docker's daemon.json (empty: none).",
        1,
    );
    assert_ne!(broken, metadata);
    let caught = actionlint(copy("actionlint-oracle", &broken, &workflows).path());
    assert!(
        caught.contains("could not parse action metadata"),
        "actionlint missed it: {caught}"
    );

    let findings = actionlint(copy("actionlint", &metadata, &workflows).path());
    assert!(findings.is_empty(), "actionlint:\n{findings}");
    eprintln!(
        "actionlint: {} workflows ({from_docs} from docs/): no finding",
        workflows.len()
    );
}

#[test]
fn pyyaml_and_npm_yaml_parse_action_yml() {
    let file = repository().join("action.yml");
    let python = Command::new(format!("{VENV}/python"))
        .args([
            "-c",
            "import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); \
             print(d['runs']['using'], d['runs']['main'], d['runs']['post'], len(d['inputs']))",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(python.status.success(), "PyYAML: {}", said(&python));
    let node = Command::new("/usr/bin/node")
        .args([
            "-e",
            "const d = require('yaml').parse(require('fs').readFileSync(process.argv[1], 'utf8'), \
             { strict: true, uniqueKeys: true }); \
             console.log(d.runs.using, d.runs.main, d.runs.post, Object.keys(d.inputs).length)",
        ])
        .arg(&file)
        .env("NODE_PATH", format!("{NODE_TOOLS}/node_modules"))
        .output()
        .unwrap();
    assert!(node.status.success(), "npm yaml: {}", said(&node));
    let (python, node) = (said(&python), said(&node));
    assert_eq!(python, node);
    assert!(
        python.starts_with("node24 action/main.js action/post.js "),
        "{python}"
    );
    for script in ["main.js", "post.js"] {
        assert!(repository().join("action").join(script).is_file());
    }
}

/// The release workflow as security review 3 (issue 45) read it: a write
/// token only in a job that builds nothing (building runs every
/// dependency's build script), every action pinned by a full commit SHA
/// (a tag of theirs can move), and no tag of ours moved (no force).
#[test]
fn the_release_workflow_writes_only_where_it_publishes_and_pins_by_commit() {
    let file = repository().join(".github/workflows/release.yml");
    let python = Command::new(format!("{VENV}/python"))
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(python.status.success(), "PyYAML: {}", said(&python));
    let workflow: serde_json::Value = serde_json::from_slice(&python.stdout).unwrap();
    let writes = |permissions: &serde_json::Value| match permissions {
        serde_json::Value::String(all) => all == "write-all",
        serde_json::Value::Object(each) => each.values().any(|v| v == "write"),
        _ => false,
    };
    let top = &workflow["permissions"];
    assert!(
        !top.is_null() && !writes(top),
        "the workflow's token: {top}"
    );
    let mut publishers = 0;
    for (name, job) in workflow["jobs"].as_object().unwrap() {
        let steps = job["steps"].as_array().unwrap();
        let run: String = steps
            .iter()
            .filter_map(|step| step["run"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let builds = ["scripts/release", "cargo ", "make "]
            .iter()
            .any(|b| run.contains(b));
        let permissions = &job["permissions"];
        let job_writes = writes(permissions) || (permissions.is_null() && writes(top));
        assert!(
            !(builds && job_writes),
            "job {name} builds with a write token"
        );
        publishers += usize::from(job_writes);
        for used in steps.iter().filter_map(|step| step["uses"].as_str()) {
            let pinned = used
                .split_once('@')
                .is_some_and(|(_, at)| at.len() == 40 && at.bytes().all(|b| b.is_ascii_hexdigit()));
            assert!(pinned, "job {name}: {used} is not pinned by commit");
        }
        for line in run
            .lines()
            .filter(|l| l.contains("git tag") || l.contains("git push"))
        {
            let words: Vec<&str> = line.split_whitespace().collect();
            let forced = words.iter().any(|w| {
                *w == "--force" || (w.starts_with('-') && !w.starts_with("--") && w.contains('f'))
            });
            assert!(!forced, "job {name} moves a tag: {line}");
        }
    }
    assert_eq!(publishers, 1, "one job publishes");
}
