//! A program run as a test needs it: with the library (`LD_PRELOAD`) or
//! without, with its own environment and folder, under `strace -f` when
//! the test must see what reached the kernel.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::{TempDir, library, whole_machine_sync};

/// How to run a program: with the library or without, under strace or not.
pub struct Run {
    program: PathBuf,
    args: Vec<std::ffi::OsString>,
    preload: bool,
    envs: Vec<(String, std::ffi::OsString)>,
    trace: Option<Vec<String>>,
    cwd: Option<PathBuf>,
}

/// What a run gave: its output and, under strace, one line per traced call.
pub struct Outcome {
    pub output: Output,
    pub calls: Vec<String>,
}

impl Run {
    pub fn new(program: impl AsRef<Path>) -> Run {
        Run {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            preload: false,
            envs: Vec::new(),
            trace: None,
            cwd: None,
        }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Run {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, args: I) -> Run {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Loads the library into the program (through `LD_PRELOAD`).
    pub fn preload(mut self, on: bool) -> Run {
        self.preload = on;
        self
    }

    pub fn env(mut self, name: &str, value: impl AsRef<OsStr>) -> Run {
        self.envs.push((name.to_owned(), value.as_ref().to_owned()));
        self
    }

    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Run {
        self.cwd = Some(dir.as_ref().to_owned());
        self
    }

    /// Runs under `strace -f`, watching `calls`.
    pub fn trace(mut self, calls: &[&str]) -> Run {
        self.trace = Some(calls.iter().map(|c| c.to_string()).collect());
        self
    }

    pub fn run(self) -> Outcome {
        if self.may_call_sync() {
            return whole_machine_sync(|| self.run_now());
        }
        self.run_now()
    }

    /// Whether the run starts a probe that calls sync(2), as its program or
    /// an argument (of valgrind, say), without the library or with it
    /// disabled: it then runs under [`whole_machine_sync`]. (A preloaded
    /// program whose loader refuses the library, a 32-bit one, is the
    /// test's to lock: `foreign.rs` does.)
    fn may_call_sync(&self) -> bool {
        // "syncer": sync_calls copied under a command's name (wrapper/names.rs).
        const SYNCING: [&str; 5] = [
            "sync_calls",
            "both_ways",
            "raw_syscall",
            "memcheck_calls",
            "syncer",
        ];
        let disabled = self
            .envs
            .iter()
            .any(|(name, _)| name == "EATMYDATA_DISABLE");
        let through_command = self.program == super::command();
        // Under nosync (the floor), every sync call is answered before the kernel.
        let floor = self
            .program
            .file_name()
            .and_then(OsStr::to_str)
            .is_some_and(|name| name.starts_with("nosync"));
        if ((self.preload || through_command) && !disabled) || floor {
            return false;
        }
        let names = std::iter::once(self.program.as_os_str())
            .chain(self.args.iter().map(|a| a.as_os_str()));
        names
            .filter_map(|name| Path::new(name).file_name()?.to_str())
            .any(|name| SYNCING.iter().any(|probe| name.starts_with(probe)))
    }

    fn run_now(self) -> Outcome {
        let scratch = TempDir::new("strace");
        let log = scratch.join("trace");
        let mut command = match &self.trace {
            Some(calls) => {
                let mut command = Command::new("strace");
                command
                    .args(["-f", "-qq", "-s", "256", "-e", "signal=none", "-o"])
                    .arg(&log);
                command.arg(format!("-etrace={}", calls.join(",")));
                // -E sets the tracee's environment, not strace's own.
                for (name, value) in &self.envs {
                    command.arg("-E").arg(env_entry(name, value));
                }
                if self.preload {
                    command
                        .arg("-E")
                        .arg(env_entry("LD_PRELOAD", library().as_os_str()));
                }
                command.arg("--").arg(&self.program);
                command
            }
            None => {
                let mut command = Command::new(&self.program);
                command.envs(self.envs.iter().map(|(n, v)| (n, v)));
                if self.preload {
                    command.env("LD_PRELOAD", library());
                }
                command
            }
        };
        // Without the library, no LD_PRELOAD reaches the program but the one
        // a test sets itself (another library, or ours beside it).
        if !self.preload && !self.envs.iter().any(|(name, _)| name == "LD_PRELOAD") {
            command.env_remove("LD_PRELOAD");
        }
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        command.args(&self.args).stdin(Stdio::null());
        let output = command
            .output()
            .unwrap_or_else(|e| panic!("run {}: {e}", self.program.display()));
        let calls = match self.trace {
            Some(_) => fs::read_to_string(&log)
                .expect("strace wrote its log")
                .lines()
                .map(str::to_owned)
                .collect(),
            None => Vec::new(),
        };
        Outcome { output, calls }
    }
}

fn env_entry(name: &str, value: &OsStr) -> std::ffi::OsString {
    let mut entry = std::ffi::OsString::from(name);
    entry.push("=");
    entry.push(value);
    entry
}

impl Outcome {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Asserts a zero exit, showing the output otherwise.
    pub fn success(self) -> Outcome {
        assert!(
            self.output.status.success(),
            "exit {:?}\nstdout:\n{}\nstderr:\n{}",
            self.output.status,
            self.stdout(),
            self.stderr()
        );
        self
    }

    /// The traced calls of system call `name` (`fsync(3)` lines, whatever the
    /// pid prefix), resumed lines included.
    pub fn calls_of(&self, name: &str) -> Vec<&str> {
        self.calls
            .iter()
            .map(|line| {
                line.split_once(' ')
                    .map_or(line.as_str(), |(_pid, rest)| rest.trim_start())
            })
            .filter(|call| {
                call.starts_with(&format!("{name}("))
                    || call.starts_with(&format!("<... {name} resumed>"))
            })
            .collect()
    }

    /// The traced calls that mention `needle` (a path, a flag).
    pub fn calls_with(&self, needle: &str) -> Vec<&str> {
        self.calls
            .iter()
            .filter(|line| line.contains(needle))
            .map(String::as_str)
            .collect()
    }
}
