//! The command executes in place: the arguments byte for byte, the
//! exit status and death by signal the command's, an ignored SIGPIPE kept.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};

use super::{check_command_runs, eatmydata};
use crate::common::{Libc, command, library, probe};

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
    // The library the command takes: the one beside it, or, where root
    // may not load that one (a checkout under /var/tmp), root's copy.
    let taken = Command::new(command())
        .arg("--print-library")
        .output()
        .unwrap();
    let taken = String::from_utf8(taken.stdout).unwrap();
    let expected = format!(
        "pid {pid}\npreload {}:/nonexistent/a.so other.so\narg0 [{}]\narg1 [a\\xff\\x20\\x09\\x01]\narg2 []\narg3 [-v]\narg4 [--]\narg5 [two\\x20words]\n",
        taken.trim_end(),
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
