//! What `configure` refuses at once, writing nothing: a `--config` that
//! is no regular file (a FIFO would hang a plain read), and a runtime to
//! register that is not this command.

use std::fs;
use std::os::unix::fs::{FileTypeExt, PermissionsExt, symlink};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::{RUNTIME, configure};
use crate::common::{RootHome, TempDir, command};

/// `configure ARGS...` through `runtime`, or a panic when it has not
/// ended within 20 s (a hang, not a timing: a refusal takes
/// milliseconds).
fn ended(runtime: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(runtime)
        .arg("configure")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        if rx.recv_timeout(Duration::from_secs(20)).is_err() {
            // SAFETY: a signal to the child we started and have not reaped.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    });
    let status = child.wait().unwrap();
    let _ = tx.send(());
    assert!(status.code().is_some(), "configure hung and was killed");
    let mut output = child.wait_with_output().unwrap();
    output.status = status;
    output
}

#[test]
fn a_fifo_a_folder_or_a_device_as_config_is_refused_at_once() {
    let dir = TempDir::new("configure-fifo");
    let fifo = dir.join("daemon.json");
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
    let runtime = super::runtime_in(dir.path());
    for (path, what) in [
        (fifo.as_path(), "a FIFO"),
        (dir.path(), "a folder"),
        (Path::new("/dev/null"), "a device"),
    ] {
        for engine in ["docker", "containerd"] {
            let config = path.to_str().unwrap();
            let args = [engine, "--config", config, "--runtime-path", &*RUNTIME];
            let output = ended(&runtime, &args);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(125), "{stderr}");
            assert_eq!(
                stderr,
                format!(
                    "eatmydata: configure: cannot read {config}: it is {what}, not a \
                     regular file; nothing was written\n"
                )
            );
        }
    }
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(!dir.join("daemon.json.bak-eatmydata").exists());
    // Nor is the runtime's link made beside a command that has none.
    let bin = dir.join("bin");
    fs::create_dir(&bin).unwrap();
    fs::copy(command(), bin.join("eatmydata")).unwrap();
    let alone = Command::new(bin.join("eatmydata"))
        .args(["--runtime", "configure", "docker", "--config"])
        .arg(&fifo)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(alone.status.code(), Some(125), "{alone:?}");
    assert!(bin.join("eatmydata-runtime").symlink_metadata().is_err());
    // Control: the same path as a regular file is edited.
    fs::remove_file(&fifo).unwrap();
    fs::write(&fifo, "{}\n").unwrap();
    let output = configure(
        dir.path(),
        &[
            "docker",
            "--config",
            fifo.to_str().unwrap(),
            "--runtime-path",
            &*RUNTIME,
        ],
    );
    assert!(output.status.success());
    // A file larger than any config is refused the same way.
    fs::write(&fifo, vec![b' '; (1 << 20) + 1]).unwrap();
    let output = configure(
        dir.path(),
        &[
            "docker",
            "--config",
            fifo.to_str().unwrap(),
            "--runtime-path",
            &*RUNTIME,
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(125), "{stderr}");
    assert!(
        stderr.contains("it holds more than 1048576 bytes"),
        "{stderr}"
    );
}

#[test]
fn a_planted_eatmydata_runtime_is_not_registered() {
    let dir = TempDir::new("configure-planted");
    // The command in a folder of root's, where the file beside it would be
    // registered (elsewhere `configure` copies the command to root's place).
    let home = RootHome::new("configure-planted");
    let bin = home.join("bin");
    fs::create_dir(&bin).unwrap();
    let copy = bin.join("eatmydata");
    fs::copy(command(), &copy).unwrap();
    let planted = bin.join("eatmydata-runtime");
    fs::write(&planted, "#!/bin/sh\nexec runc \"$@\"\n").unwrap();
    fs::set_permissions(&planted, fs::Permissions::from_mode(0o755)).unwrap();
    let config = dir.join("daemon.json");
    let config = config.to_str().unwrap();
    let run = |args: &[&str]| {
        Command::new(&copy)
            .arg("--runtime")
            .arg("configure")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let refused = run(&["docker", "--config", config]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(78), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "eatmydata: configure: will not register {}: it is not this command",
            planted.display()
        )),
        "{stderr}"
    );
    assert!(!Path::new(config).exists());
    // The same through --runtime-path.
    let named = [
        "docker",
        "--config",
        config,
        "--runtime-path",
        planted.to_str().unwrap(),
    ];
    assert_eq!(run(&named).status.code(), Some(78));
    assert!(!Path::new(config).exists());
    // Controls: a copy of the command's bytes, and a link to it, are it.
    fs::remove_file(&planted).unwrap();
    fs::copy(command(), &planted).unwrap();
    let copied = run(&["docker", "--config", config]);
    assert!(
        copied.status.success(),
        "{}",
        String::from_utf8_lossy(&copied.stderr)
    );
    fs::remove_file(&planted).unwrap();
    symlink("eatmydata", &planted).unwrap();
    assert!(run(&named).status.success());
}

#[test]
fn a_runtime_path_missing_another_users_or_with_a_control_character_is_refused() {
    let dir = TempDir::new("configure-runtime-path");
    let config = dir.join("daemon.json");
    let config = config.to_str().unwrap();
    let refused = |path: &Path| {
        let output = configure(
            dir.path(),
            &[
                "docker",
                "--config",
                config,
                "--runtime-path",
                path.to_str().unwrap(),
            ],
        );
        assert_eq!(
            output.status.code(),
            Some(78),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            !Path::new(config).exists(),
            "written for {}",
            path.display()
        );
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    // Not there: before, registered unchecked.
    let missing = dir.join("nowhere/eatmydata-runtime");
    assert!(refused(&missing).contains(": it does not exist;"));
    // This command's bytes, but another user's file: they could swap it.
    // In folders of root's, so that the file alone is what is refused.
    let home = RootHome::new("configure-runtime-path");
    let theirs = home.join("theirs");
    fs::create_dir(&theirs).unwrap();
    let copy = theirs.join("eatmydata-runtime");
    fs::copy(command(), &copy).unwrap();
    std::os::unix::fs::chown(&copy, Some(65534), Some(65534)).unwrap();
    let why = refused(&copy);
    assert!(
        why.contains(&format!(
            "an engine must not run it from there: {} belongs to user 65534",
            copy.display()
        )),
        "{why}"
    );
    // A newline in the path: a directive in docker.service's drop-in.
    let odd = home.join("odd\nExecStartPre=true");
    fs::create_dir(&odd).unwrap();
    let copy = odd.join("eatmydata-runtime");
    fs::copy(command(), &copy).unwrap();
    assert!(refused(&copy).contains("its path holds a control character"));
    // The control: the same copy, root's, in a folder of root's.
    let ours = home.join("ours/eatmydata-runtime");
    fs::create_dir(ours.parent().unwrap()).unwrap();
    fs::copy(command(), &ours).unwrap();
    let output = configure(
        dir.path(),
        &[
            "docker",
            "--config",
            config,
            "--runtime-path",
            ours.to_str().unwrap(),
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Run from a folder of root's whose name holds a control character,
/// `configure` refuses before it makes anything for it: no
/// `eatmydata-runtime` link beside the command, no copy, no engine file.
/// Security review 3 (issue 45): the link was made, then the path
/// refused. The control: the same command in a plain folder of root's
/// makes the link and registers it.
#[test]
fn a_command_in_a_folder_named_with_a_control_character_makes_nothing() {
    let home = RootHome::new("configure-odd-folder");
    let run = |folder: &Path| {
        fs::create_dir(folder).unwrap();
        fs::copy(command(), folder.join("eatmydata")).unwrap();
        let config = folder.with_extension("json");
        let output = Command::new(folder.join("eatmydata"))
            .args(["--runtime", "configure", "podman", "--config"])
            .arg(&config)
            .env("EATMYDATA_HOME", home.join("copies"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (output, config)
    };
    let odd = home.join("odd\nExecStartPre=true");
    let (output, config) = run(&odd);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(78), "{stderr}");
    assert!(
        stderr.contains("its path holds a control character"),
        "{stderr}"
    );
    let link = odd.join("eatmydata-runtime");
    assert!(
        link.symlink_metadata().is_err(),
        "made {link:?} for a path it refused"
    );
    assert!(!home.join("copies").exists(), "copied");
    assert!(!config.exists(), "wrote {config:?}");
    let (output, config) = run(&home.join("plain"));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        home.join("plain/eatmydata-runtime")
            .symlink_metadata()
            .is_ok()
    );
    assert!(config.exists());
}
