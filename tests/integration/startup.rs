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
    in_root_with(dir, |at| {
        std::fs::write(at, planted).unwrap();
        std::fs::set_permissions(at, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    })
}

/// The same, with what is at the library's path in ROOT made by `plant`.
fn in_root_with(dir: &TempDir, plant: impl FnOnce(&Path)) -> (String, String) {
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
    plant(&at);
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

/// Security review 4 (issue 45), info: in another root, whoever owns it
/// may put anything at the library's name, and the exec check opened it
/// to read its build ID before knowing what it was: a device node's open
/// alone acts (a watchdog's starts it). A FIFO there shows an open: a
/// writer blocked opening its other end goes on once anyone opens it for
/// reading. Only a regular file is opened now; the FIFO's writer stays
/// blocked until the test itself opens it, the control that the oracle
/// sees an open.
#[test]
fn in_another_root_only_a_regular_file_at_the_library_s_name_is_opened() {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = TempDir::new("startup-fifo");
    let fifo = dir.join("root").join(library().strip_prefix("/").unwrap());
    let (opened, released) = std::sync::mpsc::channel();
    let (left, stderr) = in_root_with(&dir, |at| {
        let name = std::ffi::CString::new(at.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
        let at = at.to_owned();
        std::thread::spawn(move || {
            let writer = std::fs::OpenOptions::new().write(true).open(&at);
            let _ = opened.send(writer.is_ok());
        });
    });
    assert_eq!(left, "[]\n", "not the library: it leaves ({stderr})");
    let early = released.recv_timeout(std::time::Duration::from_secs(2));
    // The control: an open for reading releases the writer.
    let reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .expect("open the FIFO for reading");
    assert!(
        early.is_err(),
        "the exec check opened the FIFO at the library's name in the other root"
    );
    let late = released.recv_timeout(std::time::Duration::from_secs(30));
    drop(reader);
    assert_eq!(late, Ok(true), "the oracle: the writer goes on once read");
}
