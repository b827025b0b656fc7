//! What another local user sees of a child `posix_spawn` starts with the
//! plain filter (`src/preload/spawn.rs`): its own arguments, as of any
//! process (`/proc/PID/cmdline` is every user's to read), and never its
//! environment, which only its own user may read (`/proc/PID/environ`).
//! Security review 3 (issue 45) found the whole environment in the
//! arguments of the trampoline that started such a child then; the child
//! now gets the filter from a thread of its parent, and no other process
//! image runs between the spawn and the program.

use std::fs;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common::pipe::{full_pipe, wait_held};
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

/// The spawner, loaded with the library and asked for the child filter,
/// starts a static program with a secret in its environment, whose
/// output a full pipe holds: the child under the filter is the program,
/// with its own arguments alone.
#[test]
fn another_user_sees_nothing_of_a_spawned_child_s_environment() {
    let library = library();
    let program = probe("container_parity", &["-static"]);
    let secret = format!("EATMYDATA_TEST_SECRET=s3cr3t-{}", std::process::id());
    let (mut printed, stdout) = full_pipe();
    let spawner = Command::new(probe("spawn_child", &[]))
        .args(["spawn", "-"])
        .arg(&program)
        .args(["env", "env"])
        .env("LD_PRELOAD", &library)
        .env("EATMYDATA_CHILD_FILTER", "1")
        .env(
            secret.split_once('=').unwrap().0,
            secret.split_once('=').unwrap().1,
        )
        .stdout(Stdio::from(stdout))
        .spawn()
        .expect("start the spawner");
    let mut spawner = Ends(spawner);
    let parent = spawner.0.id();
    let mut child = None;
    wait_until(
        "the program, held by its output",
        Duration::from_secs(30),
        || {
            child = children_of(parent).into_iter().find(|pid| {
                fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default() == b"env\0env\0"
            });
            child.is_some()
        },
    );
    let pid = child.unwrap();
    wait_held(pid);
    let seen = read_as_nobody(&format!("/proc/{pid}/cmdline")).expect("cmdline is anyone's");
    assert_eq!(seen, b"env\0env\0", "{}", String::from_utf8_lossy(&seen));
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert!(status.contains("Seccomp:\t2\n"), "{status}");
    // Where the environment is, its own user alone reads it.
    let environ = format!("/proc/{pid}/environ");
    assert!(contains(&fs::read(&environ).unwrap(), b"s3cr3t"));
    assert_eq!(read_as_nobody(&environ), None, "environ is its user's");
    // Let it go: the program runs with the environment it was given.
    let mut stdout = vec![];
    printed.read_to_end(&mut stdout).unwrap();
    let status = spawner.0.wait().unwrap();
    let stdout = String::from_utf8_lossy(&stdout);
    assert!(status.success(), "{stdout}");
    assert!(stdout.lines().any(|line| line == secret), "{stdout}");
    assert!(stdout.ends_with("status 0\n"), "{stdout}");
}
