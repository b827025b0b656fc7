//! The `eatmydata` command as a user runs it: it finds the command and the
//! library, executes in place with the arguments untouched, and fails with a
//! clear message and a distinct status.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::symlink;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::{env, fs};

use crate::common::{Libc, Run, TempDir, command, library, probe, probe_for};

fn eatmydata(args: &[&str]) -> Output {
    library();
    Command::new(command())
        .args(args)
        .env_remove("LD_PRELOAD")
        .stdin(Stdio::null())
        .output()
        .expect("run eatmydata")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn help_and_version_succeed() {
    let help = eatmydata(&["--help"]);
    assert!(help.status.success());
    assert!(
        String::from_utf8_lossy(&help.stdout)
            .starts_with("Usage: eatmydata [OPTIONS] [--] COMMAND")
    );
    let version = eatmydata(&["--version"]);
    assert_eq!(
        String::from_utf8_lossy(&version.stdout),
        format!("eatmydata {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn bad_usage_exits_2() {
    for (args, message) in [
        (&[][..], "eatmydata: no command given"),
        (&["--"], "eatmydata: no command given"),
        (
            &["--frobnicate", "true"],
            "eatmydata: unknown option '--frobnicate'",
        ),
    ] {
        let output = eatmydata(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&output).starts_with(message),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn a_missing_command_exits_127_and_an_unrunnable_one_126() {
    let missing = eatmydata(&["eatmydata-no-such-command"]);
    assert_eq!(missing.status.code(), Some(127));
    assert_eq!(
        stderr(&missing),
        "eatmydata: eatmydata-no-such-command: command not found\n"
    );

    let dir = TempDir::new("unrunnable");
    let text = dir.join("notes.txt");
    fs::write(&text, "not a program\n").unwrap();
    let output = eatmydata(&[text.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(126));
    assert!(
        stderr(&output).starts_with("eatmydata: "),
        "{}",
        stderr(&output)
    );
    let output = eatmydata(&[dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(126), "a folder cannot be run");
}

#[test]
fn a_missing_library_exits_125_and_says_where_it_looked() {
    library();
    let dir = TempDir::new("no-library");
    let lonely = dir.join("bin/eatmydata");
    fs::create_dir_all(lonely.parent().unwrap()).unwrap();
    fs::copy(command(), &lonely).unwrap();
    let output = Command::new(&lonely)
        .arg("true")
        .env_remove("EATMYDATA_LIBRARY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(125));
    let message = stderr(&output);
    assert!(
        message.starts_with("eatmydata: cannot find libeatmydata.so"),
        "{message}"
    );
    // What `cargo install` leaves, and what to do about it.
    for advice in [
        "cargo install",
        "libeatmydata1 package",
        "scripts/install.sh",
    ] {
        assert!(message.contains(advice), "{advice}: {message}");
    }
    assert!(
        message.contains(&dir.join("bin/libeatmydata.so").display().to_string()),
        "{message}"
    );
    assert!(
        message.contains(
            &dir.join("lib/eatmydata/libeatmydata.so")
                .display()
                .to_string()
        ),
        "{message}"
    );

    let output = Command::new(command())
        .arg("true")
        .env("EATMYDATA_LIBRARY", dir.join("nope.so"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(125));
    assert!(
        stderr(&output).contains("EATMYDATA_LIBRARY"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn runs_in_place_with_arguments_byte_for_byte() {
    let program = probe("show_args", &[]);
    library();
    let odd = OsString::from_vec(vec![b'a', 0xff, b' ', b'\t', 0x01]);
    let child = Command::new(command())
        .arg(&program)
        .arg(&odd)
        .args(["", "-v", "--", "two words"])
        .env("LD_PRELOAD", "/nonexistent/a.so other.so")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let expected = format!(
        "pid {pid}\npreload {}:/nonexistent/a.so other.so\narg0 [{}]\narg1 [a\\xff\\x20\\x09\\x01]\narg2 []\narg3 [-v]\narg4 [--]\narg5 [two\\x20words]\n",
        library().display(),
        program.display()
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), expected);
}

#[test]
fn exit_status_and_death_by_signal_are_the_commands() {
    let output = eatmydata(&["sh", "-c", "exit 42"]);
    assert_eq!(output.status.code(), Some(42));
    let output = eatmydata(&["sh", "-c", "kill -KILL $$"]);
    assert_eq!(output.status.signal(), Some(9));
}

#[test]
fn the_command_runs_with_the_library() {
    check_command_runs(Libc::Glibc);
}

/// `eatmydata PROBE` for a probe built against `libc`: its fsync is eaten.
pub fn check_command_runs(libc: Libc) {
    let dir = TempDir::new("wrapped");
    let program = probe_for(libc, "sync_calls", &[]);
    let data = dir.join("data");
    let plain = Run::new(&program)
        .arg(&data)
        .trace(&["fsync"])
        .run()
        .success();
    assert_eq!(
        plain.calls_of("fsync").len(),
        1,
        "control: {:?}",
        plain.calls
    );
    let wrapped = Run::new(command())
        .arg(&program)
        .arg(&data)
        .trace(&["fsync", "execve"])
        .run()
        .success();
    assert!(wrapped.calls_of("fsync").is_empty(), "{:?}", wrapped.calls);
    // One exec of eatmydata, one of the command: no shell in between.
    assert_eq!(wrapped.calls_of("execve").len(), 2, "{:?}", wrapped.calls);
}

#[test]
fn a_link_or_copy_named_after_a_command_runs_the_next_one_in_path() {
    let dir = TempDir::new("symlink-mode");
    let (links, copies, real) = (dir.join("links"), dir.join("copies"), dir.join("real"));
    for folder in [&links, &copies, &real] {
        fs::create_dir_all(folder).unwrap();
    }
    fs::copy(probe("sync_calls", &[]), real.join("syncer")).unwrap();
    symlink(command(), links.join("syncer")).unwrap();
    // A container image's COPY turns the link into a copy; that works too,
    // with the library found by EATMYDATA_LIBRARY as an image would set it.
    fs::copy(command(), copies.join("syncer")).unwrap();

    let control = Run::new(real.join("syncer"))
        .arg(dir.join("a"))
        .trace(&["fsync"])
        .run()
        .success();
    assert_eq!(
        control.calls_of("fsync").len(),
        1,
        "control: {:?}",
        control.calls
    );
    for (first, out) in [(&links, "b"), (&copies, "c")] {
        let path = env::join_paths([
            first.as_path(),
            real.as_path(),
            Path::new("/usr/bin"),
            Path::new("/bin"),
        ])
        .unwrap();
        let named = Run::new(first.join("syncer"))
            .arg(dir.join(out))
            .env("PATH", &path)
            .env("EATMYDATA_LIBRARY", library())
            .trace(&["fsync"])
            .run()
            .success();
        assert!(
            named.calls_of("fsync").is_empty(),
            "{first:?}: {:?}",
            named.calls
        );
        assert!(dir.join(out).is_file(), "{first:?}: the real syncer ran");
    }
}

#[test]
fn a_copy_with_eatmydata_in_its_name_is_the_command() {
    let dir = TempDir::new("renamed");
    for name in ["ours-eatmydata", "eatmydata-rs"] {
        fs::copy(command(), dir.join(name)).unwrap();
        let output = Command::new(dir.join(name))
            .args(["-v", "true"])
            .env("EATMYDATA_LIBRARY", library())
            .output()
            .unwrap();
        assert!(output.status.success(), "{name}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("running /"),
            "{name}: {}",
            stderr(&output)
        );
    }
    // Control: a name without it is symlink mode, and finds no command by
    // that name in PATH but itself.
    fs::copy(command(), dir.join("ours-eat")).unwrap();
    let output = Command::new(dir.join("ours-eat"))
        .args(["-v", "true"])
        .env("EATMYDATA_LIBRARY", library())
        .env("PATH", dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(127), "{}", stderr(&output));
}

#[test]
fn a_link_named_eatmydata_finds_the_library_beside_the_real_file() {
    let dir = TempDir::new("link-elsewhere");
    symlink(command(), dir.join("eatmydata")).unwrap();
    library();
    let output = Command::new(dir.join("eatmydata"))
        .args(["-v", "true"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&library().display().to_string()),
        "{}",
        stderr(&output)
    );
}

#[test]
fn the_install_script_lays_out_what_the_command_finds() {
    library();
    let prefix = TempDir::new("install");
    // Install what this test run built, in whichever profile that is.
    let staged = prefix.join("src/target/release");
    fs::create_dir_all(&staged).unwrap();
    fs::copy(command(), staged.join("eatmydata")).unwrap();
    fs::copy(library(), staged.join("libeatmydata.so")).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in [
        "scripts/install.sh",
        "doc/eatmydata.1",
        "packaging/debian/eatmydata.bash-completion",
    ] {
        let to = prefix.join("src").join(file);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(source.join(file), to).unwrap();
    }
    let script = prefix.join("src/scripts/install.sh");
    let root = prefix.join("root");
    let status = Command::new("bash")
        .arg(&script)
        .args(["--no-build", "--prefix"])
        .arg(&root)
        .status()
        .unwrap();
    assert!(status.success());
    let installed_files = [
        "bin/eatmydata",
        "lib/eatmydata/libeatmydata.so",
        "share/man/man1/eatmydata.1",
        "share/bash-completion/completions/eatmydata",
    ];
    for file in installed_files {
        assert!(root.join(file).is_file(), "{file} not installed");
    }

    let data = prefix.join("data");
    let installed = Run::new(root.join("bin/eatmydata"))
        .arg(probe("sync_calls", &[]))
        .arg(&data);
    let installed = installed.trace(&["fsync"]).run().success();
    assert!(
        installed.calls_of("fsync").is_empty(),
        "{:?}",
        installed.calls
    );

    // Uninstall removes exactly what was installed: a file of someone
    // else's in the same folder stays.
    fs::write(root.join("bin/other"), "").unwrap();
    let status = Command::new("bash")
        .arg(&script)
        .args(["--uninstall", "--prefix"])
        .arg(&root)
        .status()
        .unwrap();
    assert!(status.success());
    for file in installed_files {
        assert!(!root.join(file).exists(), "{file} left behind");
    }
    assert!(!root.join("lib/eatmydata").exists());
    assert!(root.join("bin/other").is_file());

    let bad = Command::new("bash")
        .arg(&script)
        .args(["--no-build", "--prefix", "relative"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).starts_with("eatmydata: install:"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn an_ignored_sigpipe_stays_ignored_as_env_passes_it() {
    library();
    let sigpipe_ignored = |ignore: bool| {
        let mut command = Command::new(command());
        command.args(["grep", "^SigIgn:", "/proc/self/status"]);
        if ignore {
            // SAFETY: signal() is async-signal-safe, as pre_exec requires.
            unsafe {
                command.pre_exec(|| {
                    libc::signal(libc::SIGPIPE, libc::SIG_IGN);
                    Ok(())
                })
            };
        }
        let output = command.output().unwrap();
        let mask = String::from_utf8_lossy(&output.stdout);
        let mask =
            u64::from_str_radix(mask.trim_start_matches("SigIgn:").trim(), 16).expect("a hex mask");
        mask & (1 << (libc::SIGPIPE - 1)) != 0
    };
    assert!(sigpipe_ignored(true));
    assert!(!sigpipe_ignored(false));
}

#[test]
fn a_database_client_gets_a_note_once_and_still_runs() {
    let client = eatmydata(&["psql", "--version"]);
    assert!(client.status.success());
    assert!(String::from_utf8_lossy(&client.stdout).starts_with("psql (PostgreSQL)"));
    let notes: Vec<String> = stderr(&client).lines().map(str::to_owned).collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("eatmydata: psql is a database client: the server"),
        "{notes:?}"
    );
    // Silenced, for a server already under eatmydata.
    library();
    let silenced = Command::new(command())
        .args(["psql", "--version"])
        .env("EATMYDATA_CLIENT_NOTICE", "0")
        .env_remove("LD_PRELOAD")
        .output()
        .expect("run eatmydata");
    assert!(silenced.status.success());
    assert_eq!(stderr(&silenced), "");
    // The control: a program that does its own syncing gets no note.
    let sqlite = eatmydata(&["sqlite3", "--version"]);
    assert!(sqlite.status.success());
    assert_eq!(stderr(&sqlite), "");
}
