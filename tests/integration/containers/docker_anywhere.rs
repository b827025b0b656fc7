//! `configure docker --default` run by root from where root must not run
//! a program from (`/tmp/x/eatmydata`, any user may rename in `/tmp`):
//! before, it registered `/tmp/x/eatmydata-runtime` and every `docker run`
//! on the machine then failed ("cannot place the library"). Now it copies
//! the command to root's place for it (`EATMYDATA_HOME/bin/`, a folder of
//! the test's own under /run), proves the copy with `check`, registers the
//! copy; a dockerd of the test's own reads it, and a container with no
//! `--runtime` (the default) is eaten beside runc's control, on a loop
//! device. Where nothing can work (a home every user may write), configure
//! fails and daemon.json is as it was, byte for byte; so with a real
//! runtime that is not there (the check fails).

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::Docker;
use crate::common::{RootHome, command};
use crate::containers::cases::{DYNAMIC, SYNCS};
use crate::containers::engine::{assert_eaten, floor_args, measure_with};
use crate::loopfs::LoopFs;

/// A copy of the command alone in a folder of root's in `/tmp`, removed
/// when dropped.
struct InTmp(PathBuf);

impl InTmp {
    fn new() -> InTmp {
        let dir = PathBuf::from(format!("/tmp/eatmydata-test-x-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        fs::copy(command(), dir.join("eatmydata")).unwrap();
        InTmp(dir)
    }

    /// `eatmydata --runtime configure docker ARGS...` from here, root's
    /// home at `home`, docker's drop-in folder beside `config`.
    fn configure(&self, home: &Path, config: &Path, args: &[&str]) -> Output {
        Command::new(self.0.join("eatmydata"))
            .args(["--runtime", "configure", "docker", "--default", "--config"])
            .arg(config)
            .arg("--systemd-dir")
            .arg(config.with_file_name("systemd"))
            .args(args)
            .env("EATMYDATA_HOME", home)
            .output()
            .unwrap()
    }
}

impl Drop for InTmp {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Every folder from `/` to `path` and `path` itself root's, writable by
/// root alone (no link on the way).
fn roots_chain(path: &Path) {
    let mut at = PathBuf::from("/");
    for part in path.components().skip(1) {
        at.push(part);
        let meta = fs::symlink_metadata(&at).unwrap();
        assert_eq!(meta.uid(), 0, "{} is not root's", at.display());
        assert_eq!(
            meta.mode() & 0o022,
            0,
            "{} is writable by others",
            at.display()
        );
    }
}

#[test]
fn configure_docker_default_from_tmp_registers_a_copy_of_roots_and_every_container_is_eaten() {
    let x = InTmp::new();
    let home = RootHome::new("docker-anywhere");
    let roots = home.join("home");
    let mut said = String::new();
    let docker = Docker::start_registered(|config| {
        let output = x.configure(&roots, config, &[]);
        said = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "configure: {}{said}",
            String::from_utf8_lossy(&output.stderr)
        );
    });
    let copy = roots.join("bin/eatmydata-runtime");
    assert!(
        said.contains(&format!(
            "This command is at {}, where an engine must not run it from (/tmp is \
             writable by every user)",
            x.0.join("eatmydata").display()
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!("Registering the copy, {}.", copy.display())),
        "{said}"
    );
    assert!(said.contains("check: Ready"), "{said}");
    let info = docker.ok(&["info", "--format", "{{.DefaultRuntime}} {{json .Runtimes}}"]);
    assert!(info.starts_with("eatmydata "), "{info}");
    assert!(
        info.contains(&format!("\"path\":\"{}\"", copy.display())),
        "{info}"
    );
    // The file dockerd runs as root: root's, in a chain of root's.
    roots_chain(&copy.canonicalize().unwrap());
    assert_eq!(fs::read(&copy).unwrap(), fs::read(command()).unwrap());

    // A container with no --runtime (the default) beside runc's control.
    let disk = LoopFs::new("docker-anywhere", 64);
    let syncs = SYNCS.to_string();
    let run = |runtime: Option<&str>, file: &str, floor: bool| {
        let job = [DYNAMIC, "loop", file, &syncs];
        let job = if floor {
            floor_args(&disk, &job)
        } else {
            job.to_vec()
        };
        measure_with(&disk, || {
            let mut run = docker.docker();
            run.args(["run", "--rm", "--network=none"]);
            run.args(runtime);
            run.arg("-v")
                .arg(format!("{}:/data", disk.path().display()));
            run.arg(super::super::engine::Engine::image(&docker));
            run.args(&job);
            run.output().unwrap().into()
        })
    };
    let control = run(Some("--runtime=runc"), "/data/control", false);
    let floor = run(Some("--runtime=runc"), "/data/floor", true);
    let eaten = run(None, "/data/eaten", false);
    assert_eaten(
        "docker",
        "default from /tmp",
        [&control, &floor, &eaten],
        u64::from(SYNCS),
    );
}

#[test]
fn where_nothing_can_work_configure_fails_and_daemon_json_is_as_it_was() {
    let x = InTmp::new();
    let home = RootHome::new("docker-nowhere");
    let config = home.join("daemon.json");
    let theirs = "{\n  \"storage-driver\": \"overlay2\"\n}\n";
    fs::write(&config, theirs).unwrap();
    // Root's home every user may write: no copy of root's can go there.
    let open = home.join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o1777)).unwrap();
    let refused = x.configure(&open, &config, &[]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(125), "{stderr}");
    assert!(
        stderr.contains("cannot copy this command where root may run it"),
        "{stderr}"
    );
    assert_eq!(fs::read_to_string(&config).unwrap(), theirs);
    assert!(!open.join("bin/eatmydata").exists());

    // A copy that fails its check (no such real runtime): status 69, the
    // reason, daemon.json as it was.
    let roots = home.join("home");
    let failed = x.configure(&roots, &config, &["--real-runtime", "/nonexistent/runc"]);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(69), "{stderr}");
    assert!(
        stderr.contains("check failed, so no engine file was changed"),
        "{stderr}"
    );
    assert!(stderr.contains("/nonexistent/runc"), "{stderr}");
    assert_eq!(fs::read_to_string(&config).unwrap(), theirs);
    assert!(!config.with_file_name("daemon.json.bak-eatmydata").exists());
}
