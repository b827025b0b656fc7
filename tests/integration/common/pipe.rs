//! A pipe that holds a writer: a test that must act while a program
//! stands at a known line (a message it writes before what the test is
//! about) gives it a full pipe there, acts, then reads the pipe.

use std::fs;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use super::wait_until;

/// A pipe whose write end is full (4 KiB written, none read): the read
/// end, and the write end to give a program, whose first write then
/// blocks until the read end is read.
pub fn full_pipe() -> (fs::File, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: room for two descriptors.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: just made, owned by nothing else.
    let (read, write) = unsafe { (fs::File::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: plain fcntls of our own descriptor.
    unsafe {
        libc::fcntl(write.as_raw_fd(), libc::F_SETPIPE_SZ, 4096);
        libc::fcntl(write.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK);
    }
    let mut writer = fs::File::from(write.try_clone().unwrap());
    while writer.write(&[b'.'; 512]).is_ok() {}
    // SAFETY: as above: writes block again (the flag is the pipe's, shared
    // with the program's descriptor).
    unsafe { libc::fcntl(write.as_raw_fd(), libc::F_SETFL, 0) };
    (read, write)
}

/// Waits (30 s at most) until the process `pid` stands blocked writing
/// to a full pipe.
pub fn wait_held(pid: u32) {
    wait_until(
        "a writer held by its full pipe",
        Duration::from_secs(30),
        || {
            let wchan = fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
            // pipe_write, or anon_pipe_write on later kernels.
            wchan.ends_with("pipe_write")
        },
    );
}
