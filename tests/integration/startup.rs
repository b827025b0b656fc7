//! Start-up costs no more system calls than the original libeatmydata's:
//! what only an exec needs is learned at the first exec, never in a
//! process that does not exec. Counted by strace, beside a plain run and
//! one under Debian's libeatmydata1.

use std::path::Path;
use std::process::Command;

use crate::common::{TempDir, library};

/// Debian's libeatmydata (package libeatmydata1).
const ORIGINAL: &str = "/usr/lib/x86_64-linux-gnu/libeatmydata.so.1";

/// The system calls `/bin/true` makes with `preload` (none: plain), as
/// strace lists them, one line each.
fn calls(preload: Option<&Path>, dir: &TempDir) -> Vec<String> {
    let out = dir.join("trace");
    let mut strace = Command::new("strace");
    strace.args(["-qq", "-o"]).arg(&out).arg("/bin/true");
    strace.env_remove("LD_PRELOAD");
    if let Some(library) = preload {
        strace.env("LD_PRELOAD", library);
    }
    let status = strace.status().expect("strace runs");
    assert!(status.success(), "{status}");
    let trace = std::fs::read_to_string(&out).expect("the trace");
    trace
        .lines()
        .filter(|line| line.contains('('))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_process_that_never_execs_starts_as_cheaply_as_under_the_original() {
    let dir = TempDir::new("startup");
    let plain = calls(None, &dir);
    let ours = calls(Some(&library()), &dir);
    // Control: the library is loaded (opened and mapped), so the count
    // can tell it.
    assert!(ours.len() > plain.len(), "{plain:?}\n{ours:?}");
    let name = library().to_string_lossy().into_owned();
    let opened = |call: &String| call.starts_with("openat(") && call.contains(&name);
    assert!(ours.iter().any(opened), "{ours:?}");
    // Nothing of the exec check: no statx of the library's own path.
    assert!(
        !ours.iter().any(|call| call.starts_with("statx(")),
        "{ours:?}"
    );
    assert!(
        Path::new(ORIGINAL).exists(),
        "{ORIGINAL}: scripts/setup-test-deps installs libeatmydata1"
    );
    let original = calls(Some(Path::new(ORIGINAL)), &dir);
    assert!(original.len() > plain.len(), "{original:?}");
    assert!(
        ours.len() <= original.len(),
        "ours {} against the original's {}:\n{ours:?}\n{original:?}",
        ours.len(),
        original.len()
    );
}

/// What `chroot ROOT /bin/dash` prints of its `LD_PRELOAD`, and its
/// stderr, under the library, where ROOT holds a dash, its libc, and at
/// the library's path `planted`.
fn in_root(planted: &[u8], dir: &TempDir) -> (String, String) {
    let root = dir.join("root");
    let _ = std::fs::remove_dir_all(&root);
    for file in [
        "/bin/dash",
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/lib64/ld-linux-x86-64.so.2",
    ] {
        let to = root.join(file.trim_start_matches('/'));
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(file, &to).unwrap();
    }
    let ours = library();
    let at = root.join(ours.strip_prefix("/").unwrap());
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    std::fs::write(&at, planted).unwrap();
    std::fs::set_permissions(&at, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let output = Command::new("chroot")
        .arg(&root)
        .args(["/bin/dash", "-c", "echo \"[$LD_PRELOAD]\""])
        .env("LD_PRELOAD", &ours)
        .output()
        .expect("chroot runs");
    assert!(output.status.success(), "{output:?}");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (text(&output.stdout), text(&output.stderr))
}

#[test]
fn learned_at_the_first_exec_a_roots_other_file_is_not_taken_for_the_library() {
    let dir = TempDir::new("startup-root");
    let ours = library();
    // Control: the same build at the path in the root keeps the library.
    let same = std::fs::read(&ours).unwrap();
    let (kept, quiet) = in_root(&same, &dir);
    assert_eq!(kept, format!("[{}]\n", ours.display()), "{quiet}");
    assert_eq!(quiet, "");
    // Another file there (learned by its path alone, it would pass): the
    // library leaves, and the loader has nothing to complain of.
    let (left, stderr) = in_root(b"not a library", &dir);
    assert_eq!(left, "[]\n", "{stderr}");
    assert_eq!(stderr, "");
}
