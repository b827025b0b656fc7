//! What a person typing the runtime's name meets first: alone or with
//! `--help`, this project's help, naming runc as what it hands calls to; a
//! verb neither it nor runc knows still goes to runc, whose refusal is
//! followed by one line naming the runtime's own commands; and a user who
//! is not root is told to run it as root, `configure` making nothing
//! first. Each beside runc's own answer to the same line.

use std::fs;
use std::os::unix::fs::symlink;
use std::process::{Command, Output, Stdio};

use super::text;
use crate::common::{TempDir, command, registered_runtime};

/// `program ARGS...`, as the user nobody when `nobody`, with no stdin.
fn typed(program: &str, args: &[&str], nobody: bool) -> Output {
    let mut line = match nobody {
        true => {
            let mut runuser = Command::new("runuser");
            runuser.args(["-u", "nobody", "--", program]);
            runuser
        }
        false => Command::new(program),
    };
    line.args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run the line")
}

/// The runtime as installed, in a folder any user may reach.
fn link(dir: &TempDir) -> String {
    let link = dir.join("eatmydata-runtime");
    symlink(command(), &link).unwrap();
    link.to_str().unwrap().to_owned()
}

/// Before: both printed runc's help.
#[test]
fn alone_or_asked_for_help_it_gives_its_own_naming_runc() {
    let dir = TempDir::trusted("runtime-newcomer-help");
    let runtime = link(&dir);
    let runcs = typed("runc", &[], false);
    assert!(runcs.status.success(), "{}", text(&runcs));
    for args in [&[][..], &["--help"], &["-h"], &["help"]] {
        let ours = typed(&runtime, args, false);
        let help = String::from_utf8_lossy(&ours.stdout);
        assert!(ours.status.success(), "{args:?}: {}", text(&ours));
        assert!(
            help.starts_with("Usage: eatmydata-runtime "),
            "{args:?}: {help}"
        );
        assert!(help.contains("'runc --help' lists the verbs"), "{help}");
        assert_ne!(ours.stdout, runcs.stdout, "{args:?}");
    }
    // Help on one of runc's verbs is runc's.
    let (alone, ours) = (
        typed("runc", &["help", "run"], false),
        typed(&runtime, &["help", "run"], false),
    );
    assert_eq!(ours.stdout, alone.stdout, "{}", text(&ours));
}

/// Before: runc's refusal alone ("No help topic for 'reprot'").
#[test]
fn a_verb_nobody_knows_goes_to_runc_and_its_refusal_gets_one_line_more() {
    let dir = TempDir::trusted("runtime-newcomer-typo");
    let runtime = link(&dir);
    let state = dir.join("state");
    fs::create_dir(&state).unwrap();
    let args = ["--root", state.to_str().unwrap(), "reprot"];
    let (alone, ours) = (typed("runc", &args, false), typed(&runtime, &args, false));
    assert_ne!(alone.status.code(), Some(0), "{}", text(&alone));
    assert_eq!(ours.status.code(), alone.status.code(), "{}", text(&ours));
    assert_eq!(ours.stdout, alone.stdout);
    let (theirs, said) = (
        String::from_utf8_lossy(&alone.stderr),
        String::from_utf8_lossy(&ours.stderr),
    );
    assert!(theirs.contains("reprot"), "{theirs}");
    let ours_lines: Vec<&str> = said.lines().collect();
    assert_eq!(ours_lines.len(), theirs.lines().count() + 1, "{said}");
    let last = ours_lines.last().unwrap();
    assert!(
        last.starts_with("eatmydata: runc does not know 'reprot' either")
            && last.contains("configure, report, install, uninstall, check")
            && last.contains("(did you mean report?)"),
        "{said}"
    );
    // A verb it knows is runc's alone, byte for byte (no line of ours).
    let args = ["--root", state.to_str().unwrap(), "list"];
    let (alone, ours) = (typed("runc", &args, false), typed(&runtime, &args, false));
    assert_eq!(
        (ours.status.code(), &ours.stdout, &ours.stderr),
        (alone.status.code(), &alone.stdout, &alone.stderr)
    );
}

/// Before: runc's "permission denied" alone, and `configure` failed late
/// without a word about root.
#[test]
fn a_user_who_is_not_root_is_told_to_run_it_as_root() {
    let dir = TempDir::trusted("runtime-newcomer-user");
    let runtime = link(&dir);
    let (alone, ours) = (
        typed("runc", &["list"], true),
        typed(&runtime, &["list"], true),
    );
    assert_ne!(alone.status.code(), Some(0), "{}", text(&alone));
    assert_eq!(ours.status.code(), alone.status.code(), "{}", text(&ours));
    let said = String::from_utf8_lossy(&ours.stderr);
    assert!(
        said.trim_end().ends_with(
            "eatmydata: you are not root (uid 65534): run it as root, as \
             sudo \"$(command -v eatmydata-runtime)\" ..."
        ),
        "{said}"
    );
    assert!(!String::from_utf8_lossy(&alone.stderr).contains("root, as"));

    let config = dir.join("daemon.json");
    fs::write(&config, "{}\n").unwrap();
    let config = config.to_str().unwrap();
    let systemd = dir.join("systemd");
    let args = [
        "configure",
        "docker",
        "--config",
        config,
        "--systemd-dir",
        systemd.to_str().unwrap(),
    ];
    let refused = typed(&runtime, &args, true);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(125), "{}", text(&refused));
    assert!(
        said.starts_with(&format!("eatmydata: configure: cannot change {config}: "))
            && said.contains("run it as root"),
        "{said}"
    );
    assert!(refused.stdout.is_empty(), "{}", text(&refused));
    assert_eq!(fs::read_to_string(config).unwrap(), "{}\n");
    // As root, the same line registers it: the refusal was the user's.
    let registered = registered_runtime();
    let path = ["--runtime-path", registered.to_str().unwrap()];
    let done = typed(&runtime, &[&args[..], &path].concat(), false);
    assert!(done.status.success(), "{}", text(&done));
}
