use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

use super::*;

/// An engine restarted through a pid file whose start command writes its
/// pid before it executes the engine (as `echo $$ > FILE && exec
/// containerd` does): the shell seen in between is waited on, not taken
/// for a stranger. A loaded machine made that window seconds long, and
/// the installer failed with "which is 'sh', not containerd".
#[test]
fn a_start_command_that_writes_its_pid_before_the_engine_is_waited_on() {
    let dir = std::env::temp_dir().join(format!("eatmydata-restart-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    // A stand-in whose process is named containerd (a script's name is
    // its process's), running until signalled.
    let engine_file = dir.join("containerd");
    fs::write(&engine_file, "#!/bin/sh\nwhile :; do sleep 1; done\n").unwrap();
    fs::set_permissions(&engine_file, fs::Permissions::from_mode(0o755)).unwrap();
    let pid_file = dir.join("containerd.pid");
    let start = |pause: &str| {
        format!(
            "echo $$ > {pid} && sleep {pause} && exec {engine}",
            pid = pid_file.display(),
            engine = engine_file.display()
        )
    };
    let mut first = Command::new("/bin/sh")
        .args(["-c", &start("0")])
        .spawn()
        .unwrap();
    let named = |pid: i32| fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let read_pid = || -> i32 {
        let text = fs::read_to_string(&pid_file).unwrap_or_default();
        text.trim().parse().unwrap_or(0)
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while named(read_pid()).trim_end() != "containerd" {
        assert!(Instant::now() < deadline, "the stand-in did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let old = read_pid();
    let request = Request {
        uninstall: false,
        root: "/".into(),
        engine: Some(Engine::Containerd),
        restart: Restart::PidFile {
            file: pid_file.clone(),
            start: Some(start("1")),
        },
        address: None,
        timeout: 30,
        keep_binds: false,
    };
    let host = Host::new(&PathBuf::from("/")).unwrap();
    let restarted = engine(Engine::Containerd, &host, &request);
    let _ = first.wait();
    let new = read_pid();
    let new_name = named(new);
    // SAFETY: a signal to the stand-in this test started.
    unsafe { libc::kill(new, libc::SIGKILL) };
    fs::remove_dir_all(&dir).unwrap();
    assert!(
        restarted.is_ok(),
        "{:?}",
        restarted.err().map(|e| e.to_string())
    );
    assert_ne!(new, old);
    assert_eq!(new_name.trim_end(), "containerd");
}
