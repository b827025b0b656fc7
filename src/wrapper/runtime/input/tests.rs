use std::ffi::CString;
use std::io::Write;
use std::os::fd::FromRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::*;

/// A folder of this test's own.
fn folder(label: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("eatmydata-input-{label}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&path);
    fs::create_dir_all(&path).unwrap();
    path
}

fn mkfifo(path: &Path) {
    let name = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a C string for the call.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
}

/// A pipe: its read end's name in /proc, and its write end.
fn pipe() -> (File, File) {
    let mut fds = [0; 2];
    // SAFETY: a two-int array for pipe(2).
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors are new and ours.
    unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
}

#[test]
fn a_fifo_is_refused_at_once_where_a_regular_file_is_wanted() {
    let dir = folder("fifo");
    let fifo = dir.join("config.json");
    mkfifo(&fifo);
    // No writer: an open without O_NONBLOCK would hang here.
    assert!(matches!(
        regular(&fifo, SPEC_LIMIT),
        Err(Problem::NotRegular("a FIFO"))
    ));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn reads_are_bounded() {
    let dir = folder("bound");
    let path = dir.join("state.json");
    fs::write(&path, vec![b' '; 100]).unwrap();
    assert_eq!(regular(&path, 100).unwrap().bytes.len(), 100);
    assert!(matches!(regular(&path, 99), Err(Problem::TooLarge(99))));
    assert!(matches!(process(&path, 99), Err(Problem::TooLarge(99))));
    // A pipe that never ends is read no further than the bound.
    let (read, mut write) = pipe();
    let writer = std::thread::spawn(move || while write.write_all(&[b' '; 4096]).is_ok() {});
    let name = PathBuf::from(format!("/proc/self/fd/{}", read.as_raw_fd()));
    assert!(matches!(
        process(&name, PROCESS_LIMIT),
        Err(Problem::TooLarge(PROCESS_LIMIT))
    ));
    drop(read);
    writer.join().unwrap();
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn links_are_followed_only_for_a_process_file() {
    let dir = folder("link");
    let target = dir.join("target");
    fs::write(&target, "{}").unwrap();
    let link = dir.join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert!(matches!(regular(&link, SPEC_LIMIT), Err(Problem::Link)));
    assert_eq!(process(&link, PROCESS_LIMIT).unwrap().bytes, b"{}");
    assert!(
        regular(&dir.join("none"), SPEC_LIMIT)
            .unwrap_err()
            .is_missing()
    );
    assert!(matches!(
        process(&dir, PROCESS_LIMIT),
        Err(Problem::NotRegular("a folder"))
    ));
    fs::remove_dir_all(&dir).unwrap();
}

/// `<(echo ...)` and `<(true)`: the writer may be gone before the read;
/// the bytes are all there, and an empty pipe ends at once.
#[test]
fn an_anonymous_pipe_is_read_to_its_end() {
    for text in [&b"{\"args\": []}"[..], b""] {
        let (read, mut write) = pipe();
        write.write_all(text).unwrap();
        drop(write);
        let name = PathBuf::from(format!("/proc/self/fd/{}", read.as_raw_fd()));
        let input = process(&name, PROCESS_LIMIT).unwrap();
        assert!(input.pipe);
        assert_eq!(input.bytes, text);
    }
}

/// A named FIFO waits for its writer, as runc's open would.
#[test]
fn a_named_fifo_waits_for_its_writer() {
    let dir = folder("named");
    let fifo = dir.join("process.json");
    mkfifo(&fifo);
    let path = fifo.clone();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(200));
        fs::write(path, b"{}").unwrap();
    });
    let input = process(&fifo, PROCESS_LIMIT).unwrap();
    assert_eq!(input.bytes, b"{}");
    writer.join().unwrap();
    fs::remove_dir_all(&dir).unwrap();
}
