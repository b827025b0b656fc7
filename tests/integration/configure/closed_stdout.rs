//! `configure` with its standard output a pipe whose reader has gone, as
//! `sudo eatmydata-runtime configure docker --default | head -1` leaves it
//! after the first line: it finishes what it began, daemon.json written
//! and dockerd told to reload. SIGPIPE used to end it between the two, the
//! file changed and the daemon never told.

use std::fs;
use std::io::Write as _;
use std::process::{Command, Stdio};

use super::dockerd::{Dockerd, wait_default};
use super::{DAEMON_JSON, runtime_in};
use crate::common::{TempDir, registered_runtime};

#[test]
fn a_reader_that_goes_stops_nothing() {
    let dir = TempDir::new("configure-closed-stdout");
    let config = dir.join("daemon.json");
    fs::write(&config, DAEMON_JSON).unwrap();
    let mut dockerd = Dockerd::start(&dir.join("dockerd"), &config);
    wait_default(&mut dockerd, "runc");
    let (reader, mut writer) = std::io::pipe().unwrap();
    drop(reader);
    // The control: the pipe takes nothing.
    let refused = writer.write_all(b"x").unwrap_err();
    assert_eq!(refused.raw_os_error(), Some(libc::EPIPE), "{refused}");
    let pid_file = dir.join("dockerd/dockerd.pid");
    let output = Command::new(runtime_in(dir.path()))
        .args([
            "configure",
            "docker",
            "--default",
            "--docker-version",
            "20.10.24",
        ])
        .arg("--config")
        .arg(&config)
        .arg("--pid-file")
        .arg(&pid_file)
        .arg("--systemd-dir")
        .arg(dir.join("systemd"))
        .arg("--runtime-path")
        .arg(registered_runtime())
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
    assert!(
        fs::read_to_string(&config)
            .unwrap()
            .contains("\"default-runtime\": \"eatmydata\"")
    );
    wait_default(&mut dockerd, "eatmydata");
}
