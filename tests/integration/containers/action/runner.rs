//! What the runner gives a step (the `INPUT_*` variables, the
//! `GITHUB_STATE` and `GITHUB_STEP_SUMMARY` files, `STATE_*` for post),
//! and the action run through `@github/local-action` with it: main and
//! post as the runner runs them, in two processes, or in one as docs/ci.md
//! has them typed by hand (`--post`).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use super::NODE_TOOLS;
use crate::common::TempDir;

/// The files and variables the runner gives a step.
pub(super) struct Runner {
    pub(super) dir: TempDir,
    pub(super) env: BTreeMap<String, String>,
}

impl Runner {
    pub(super) fn new(label: &str) -> Runner {
        let dir = TempDir::new(label);
        let mut env = BTreeMap::new();
        for (name, file) in [
            ("GITHUB_STATE", "state"),
            ("GITHUB_STEP_SUMMARY", "summary"),
            ("GITHUB_ENV", "env"),
            ("GITHUB_OUTPUT", "output"),
            ("GITHUB_PATH", "path"),
            ("DOTENV", "dotenv"),
        ] {
            let path = dir.join(file);
            fs::write(&path, "").unwrap();
            env.insert(name.to_owned(), path.to_str().unwrap().to_owned());
        }
        fs::create_dir_all(dir.join("temp")).unwrap();
        let temp = dir.join("temp").to_str().unwrap().to_owned();
        env.insert("RUNNER_TEMP".into(), temp.clone());
        env.insert("GITHUB_WORKSPACE".into(), temp);
        env.insert("GITHUB_ACTIONS".into(), "true".into());
        env.insert("CI".into(), "true".into());
        // No cargo: the release file is what gets installed.
        let path =
            format!("{NODE_TOOLS}/node_modules/.bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin");
        env.insert("PATH".into(), path);
        Runner { dir, env }
    }

    pub(super) fn input(&mut self, name: &str, value: &str) {
        self.env
            .insert(format!("INPUT_{}", name.to_uppercase()), value.to_owned());
    }

    /// What main saved, parsed as the runner parses `GITHUB_STATE`
    /// (`name=value` and `name<<DELIMITER` lines).
    pub(super) fn saved(&self) -> BTreeMap<String, String> {
        let text = fs::read_to_string(&self.env["GITHUB_STATE"]).unwrap();
        let mut saved = BTreeMap::new();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if let Some((name, delimiter)) = line.split_once("<<") {
                let value: Vec<&str> = lines.by_ref().take_while(|l| *l != delimiter).collect();
                saved.insert(name.to_owned(), value.join("\n"));
            } else {
                let (name, value) = line.split_once('=').expect("name=value");
                saved.insert(name.to_owned(), value.to_owned());
            }
        }
        saved
    }

    /// `local-action run ACTION action/SCRIPT` in the tools' folder (whose
    /// npm it asks), with what the runner gives: post gets `STATE_name`
    /// for each value main saved.
    pub(super) fn local_action(&self, action: &Path, script: &str) -> Output {
        let mut run = self.local_action_line(action, script);
        if script == "post.js" {
            for (name, value) in self.saved() {
                run.env(format!("STATE_{name}"), value);
            }
        }
        run.output().unwrap()
    }

    /// main, then post in the same process, as docs/ci.md has it typed by
    /// hand: `local-action run ACTION action/main.js ENV --post
    /// ACTION/action/post.js` (post's by its full path: local-action
    /// resolves `--post` from the folder it runs in).
    pub(super) fn local_action_with_post(&self, action: &Path) -> Output {
        let mut run = self.local_action_line(action, "main.js");
        run.arg("--post").arg(action.join("action/post.js"));
        run.output().unwrap()
    }

    fn local_action_line(&self, action: &Path, script: &str) -> Command {
        // The inputs in its .env file, which it loads in node: a shell
        // (npm exec's) drops variables whose names hold a '-'.
        let dotenv: String = self
            .env
            .iter()
            .filter(|(name, _)| name.starts_with("INPUT_"))
            .map(|(name, value)| format!("{name}='{value}'\n"))
            .collect();
        fs::write(&self.env["DOTENV"], dotenv).unwrap();
        let mut run = Command::new(format!("{NODE_TOOLS}/node_modules/.bin/local-action"));
        run.args(["run"])
            .arg(action)
            .arg(format!("action/{script}"))
            .arg(&self.env["DOTENV"])
            .current_dir(NODE_TOOLS)
            .env_clear()
            .envs(&self.env);
        run
    }

    pub(super) fn summary(&self) -> String {
        fs::read_to_string(&self.env["GITHUB_STEP_SUMMARY"]).unwrap()
    }
}

/// Its stdout and stderr, for a failure's message.
pub(super) fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// docs/ci.md's run by hand: main and post in one local-action process
/// (`--post`), post taking what main saved; a built command as `path`,
/// Docker, apt and the summary off. The control: post run alone, in a
/// process of its own as the page once said, has nothing of main's and
/// says so.
#[test]
fn main_and_post_in_one_local_action_run_as_ci_md_types_it() {
    let dir = crate::containers::daemon::RunDir::new("action-byhand");
    let mut runner = Runner::new("action-byhand");
    let prefix = dir.join("prefix");
    runner.input("path", crate::common::command().to_str().unwrap());
    runner.input("prefix", prefix.to_str().unwrap());
    for off in ["docker", "apt", "summary"] {
        runner.input(off, "false");
    }
    // post says what it took back on a self-hosted runner.
    let hosted = ("RUNNER_ENVIRONMENT".to_owned(), "self-hosted".to_owned());
    runner.env.extend([hosted]);
    let action = super::repository();
    let both = runner.local_action_with_post(action);
    assert!(both.status.success(), "{}", said(&both));
    assert!(prefix.join("bin/eatmydata").is_file(), "{}", said(&both));
    assert!(
        said(&both).contains("is as before the job"),
        "post got nothing of main's: {}",
        said(&both)
    );
    let alone = runner
        .local_action_line(action, "post.js")
        .output()
        .unwrap();
    assert!(alone.status.success(), "{}", said(&alone));
    assert!(
        said(&alone).contains("nothing to take back"),
        "{}",
        said(&alone)
    );
}
