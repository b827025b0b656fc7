//! `exec --process FILE` in every form a caller gives it (docker's regular
//! file, `/dev/stdin`, a shell's `<(...)`), through the runtime and through
//! runc alone, into a running container made with the library and one made
//! without: the same status and output, `LD_PRELOAD` only where the
//! library is, a pipe's bytes never lost, the caller's file never written;
//! and a name planted in the folder of the process file denies nothing.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use super::{Bundle, Container, Via, inside, text};
use crate::common::{Libc, TempDir, probe, probe_for};
use crate::loopfs::LoopFs;

/// How the process file reaches the runtime.
#[derive(Clone, Copy, Debug)]
enum Form {
    /// A file in a folder, as docker's shim writes one.
    Regular,
    /// `--process /dev/stdin`, stdin a pipe.
    Stdin,
    /// `--process <(printf ...)` from bash: `/dev/fd/63`, a pipe.
    Substitution,
}

/// `exec --process FILE ID` through `via`, the process given as `form`;
/// a regular file goes into `folder`.
fn exec(container: &Container, via: Via, form: Form, process: &Value, folder: &Path) -> Output {
    let bytes = serde_json::to_vec(process).unwrap();
    let mut command = container.bundle.command(via, None);
    command.arg("exec");
    match form {
        Form::Regular => {
            let file = folder.join("runc-process1");
            fs::write(&file, &bytes).unwrap();
            command.arg("--process").arg(&file).arg(&container.id);
            let output = command.stdin(Stdio::null()).output().unwrap();
            assert_eq!(fs::read(&file).unwrap(), bytes, "the caller's file");
            fs::remove_file(file).unwrap();
            output
        }
        Form::Stdin => {
            command.args(["--process", "/dev/stdin", &container.id]);
            let mut child = command
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(&bytes).unwrap();
            drop(stdin);
            child.wait_with_output().unwrap()
        }
        Form::Substitution => {
            let mut shell = Command::new("bash");
            shell
                .args([
                    "-c",
                    r#""$@" --process <(printf %s "$PROCESS") "$ID""#,
                    "bash",
                ])
                .arg(command.get_program())
                .args(command.get_args())
                .env("PROCESS", String::from_utf8(bytes).unwrap())
                .env("ID", &container.id);
            shell.stdin(Stdio::null()).output().unwrap()
        }
    }
}

/// `show_args`'s output without its pid line, which counts execs.
fn shown(output: &Output) -> Vec<String> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .filter(|line| !line.starts_with("pid "))
        .map(str::to_owned)
        .collect()
}

/// Before: `/dev/stdin` and `<(...)` failed with 125 ("cannot write
/// /dev/fd/63") into a container with the library, and into one without
/// it runc read nothing ("exec failed: EOF").
#[test]
fn every_form_of_process_file_reaches_runc() {
    let hold = probe("hold", &["-static"]);
    let show = probe_for(Libc::Musl, "show_args", &[]);
    let disk = LoopFs::new("runtime-exec-forms", 16);
    let bundle = Bundle::new("runtime-exec-forms", &[&hold, &show], &disk);
    let folder = TempDir::new("runtime-exec-forms-files");
    let mut process = bundle.base["process"].clone();
    process["args"] = json!([inside(&show), "a b", "\t"]);
    for (made, library) in [(Via::Ours("runc"), true), (Via::Alone("runc"), false)] {
        let container = Container::start(&bundle, made, &inside(&hold));
        for form in [Form::Regular, Form::Stdin, Form::Substitution] {
            let alone = exec(
                &container,
                Via::Alone("runc"),
                form,
                &process,
                folder.path(),
            );
            let ours = exec(&container, Via::Ours("runc"), form, &process, folder.path());
            let label = format!("{form:?}, library {library}: {}", text(&ours));
            assert!(alone.status.success(), "control {form:?}: {}", text(&alone));
            assert_eq!(ours.status, alone.status, "{label}");
            assert_eq!(
                String::from_utf8_lossy(&ours.stderr),
                String::from_utf8_lossy(&alone.stderr),
                "{label}"
            );
            let (mut ours, alone) = (shown(&ours), shown(&alone));
            assert_eq!(alone[0], "preload (unset)", "{label}");
            if library {
                assert!(ours[0].contains("libeatmydata.so"), "{label}");
                ours[0] = alone[0].clone();
            }
            assert_eq!(ours, alone, "{label}");
            assert_eq!(ours[2], "arg1 [a\\x20b]", "{label}");
        }
        assert_eq!(fs::read_dir(folder.path()).unwrap().count(), 0);
    }
}

/// docker's shim writes the process file in a shared folder (`/tmp`, or
/// `XDG_RUNTIME_DIR`); the runtime used to write its edit beside it under
/// a predictable name, `.NAME.eatmydata-PID`. Planting those names for the
/// next few thousand pids made every exec fail with 125 before; now no
/// name is made there at all, and the planted files are left alone.
#[test]
fn a_planted_name_denies_no_exec() {
    let hold = probe("hold", &["-static"]);
    let show = probe_for(Libc::Musl, "show_args", &[]);
    let disk = LoopFs::new("runtime-exec-planted", 16);
    let bundle = Bundle::new("runtime-exec-planted", &[&hold, &show], &disk);
    let shared = TempDir::new("runtime-exec-shared");
    fs::set_permissions(shared.path(), fs::Permissions::from_mode(0o1777)).unwrap();
    let container = Container::start(&bundle, Via::Ours("runc"), &inside(&hold));
    let last: u32 = fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let planted = 4000;
    for pid in last + 1..=last + planted {
        fs::write(shared.join(format!(".runc-process1.eatmydata-{pid}")), "").unwrap();
    }
    let mut process = bundle.base["process"].clone();
    process["args"] = json!([inside(&show)]);
    let ours = exec(
        &container,
        Via::Ours("runc"),
        Form::Regular,
        &process,
        shared.path(),
    );
    assert!(ours.status.success(), "{}", text(&ours));
    assert!(
        shown(&ours)[0].contains("libeatmydata.so"),
        "{}",
        text(&ours)
    );
    let left = fs::read_dir(shared.path()).unwrap().count();
    assert_eq!(left, planted as usize, "nothing made, nothing taken");
}
