//! What another local user sees of a child `posix_spawn` starts through
//! the library's trampoline (`src/preload/spawn.rs`): its arguments, as
//! of any process (`/proc/PID/cmdline` is every user's to read), never its
//! environment, which only its own user may read (`/proc/PID/environ`).
//! Security review 3 (issue 45) found the whole environment in the
//! trampoline's arguments.

use std::fs;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common::pipe::full_pipe;
use crate::common::{library, probe, wait_until};

/// The children of `parent`, from each process's `stat`.
fn children_of(parent: u32) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return vec![];
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let after = stat.rsplit_once(')').map(|(_, after)| after).unwrap_or("");
            after.split_whitespace().nth(1) == Some(&parent.to_string())
        })
        .collect()
}

/// `cat FILE` as the user nobody: what it printed, or `None` when it
/// could not read it.
fn read_as_nobody(file: &str) -> Option<Vec<u8>> {
    let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups"];
    let output = Command::new("setpriv")
        .args(nobody)
        .args(["cat", file])
        .stderr(Stdio::null())
        .output()
        .expect("run setpriv");
    output.status.success().then_some(output.stdout)
}

/// Ends the child, if the test ends before it does.
struct Ends(Child);

impl Drop for Ends {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The spawner, loaded with the library and asked for the child filter
/// with each such child said (as under `eatmydata -v`), starts a static
/// program with a secret in its environment. The trampoline says so on
/// stderr before it executes the program: a full pipe holds it there, so
/// that the other user's look cannot miss it.
#[test]
fn another_user_sees_nothing_of_a_spawned_child_s_environment() {
    let library = library();
    let program = probe("container_parity", &["-static"]);
    let secret = format!("EATMYDATA_TEST_SECRET=s3cr3t-{}", std::process::id());
    let (mut said, stderr) = full_pipe();
    let spawner = Command::new(probe("spawn_child", &[]))
        .args(["spawn", "-"])
        .arg(&program)
        .args(["env", "env"])
        .env("LD_PRELOAD", &library)
        .env("EATMYDATA_CHILD_FILTER", "verbose")
        .env(
            secret.split_once('=').unwrap().0,
            secret.split_once('=').unwrap().1,
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr))
        .spawn()
        .expect("start the spawner");
    let mut spawner = Ends(spawner);
    let parent = spawner.0.id();
    let mut trampoline = None;
    wait_until(
        "the trampoline, held by its -v line",
        Duration::from_secs(30),
        || {
            trampoline = children_of(parent).into_iter().find(|pid| {
                let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                contains(&cmdline, b"--eatmydata-spawned")
            });
            trampoline.is_some()
        },
    );
    let pid = trampoline.unwrap();
    let seen = read_as_nobody(&format!("/proc/{pid}/cmdline")).expect("cmdline is anyone's");
    assert!(contains(&seen, b"--eatmydata-spawned"), "{seen:?}");
    assert!(
        contains(&seen, program.to_str().unwrap().as_bytes()),
        "{seen:?}"
    );
    assert!(
        !contains(&seen, b"s3cr3t") && !contains(&seen, b"PATH="),
        "another user reads the environment in the trampoline's arguments: {}",
        String::from_utf8_lossy(&seen)
    );
    // Where the environment is, its own user alone reads it.
    let environ = format!("/proc/{pid}/environ");
    assert!(contains(&fs::read(&environ).unwrap(), b"s3cr3t"));
    assert_eq!(read_as_nobody(&environ), None, "environ is its user's");
    // Let it go: the program runs with the environment it was given.
    let mut stderr = vec![];
    said.read_to_end(&mut stderr).unwrap();
    let mut stdout = String::new();
    spawner
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = spawner.0.wait().unwrap();
    assert!(status.success(), "{stdout}");
    assert!(stdout.lines().any(|line| line == secret), "{stdout}");
    assert!(stdout.ends_with("status 0\n"), "{stdout}");
    let stderr = String::from_utf8_lossy(&stderr);
    assert!(stderr.contains("plain seccomp filter"), "{stderr}");
}
