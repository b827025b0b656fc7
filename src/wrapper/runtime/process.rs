//! `exec --process FILE`: the process a caller runs in a container, as a
//! file (`docker exec`'s temporary file, a pipe, `/dev/stdin`).
//!
//! Whether the container has the library is decided first, from the real
//! runtime's state; without it the file is never opened and the line goes
//! on as it came. With it the file is read once (bounded, a regular file
//! or a pipe: `input.rs`), edited, and handed to the real runtime as a
//! memfd named `/proc/self/fd/N` in place of the file's name: the caller's
//! file is never written, a pipe's bytes reach the real runtime all the
//! same, and no name is made in any folder that another user could take
//! first.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd};

use serde_json::Value;

use super::bundle::Problem;
use super::edit::Done;
use super::input;
use super::verbs::ProcessFile;

/// What became of the process file.
pub enum Handed {
    /// Read and edited (or read, from a pipe, and left as it was): the
    /// argument that names it now, and what the edit did.
    Read { arg: OsString, done: Done },
    /// Read, regular and left as it was: the line goes on unchanged.
    Unchanged(Done),
}

/// Reads the process file for a container with the library, edits it
/// with `change` (the message of a refusal), and hands it on.
pub fn hand_on(
    file: &ProcessFile,
    change: impl FnOnce(&mut Value) -> Result<Done, String>,
) -> Result<Handed, Problem> {
    let input = input::process(&file.path, input::PROCESS_LIMIT).map_err(Problem::Read)?;
    let mut value: Value = serde_json::from_slice(&input.bytes).map_err(Problem::Parse)?;
    let done = change(&mut value).map_err(Problem::Edit)?;
    let bytes = if done.changed() {
        serde_json::to_vec(&value).map_err(|e| Problem::Write(e.into()))?
    } else if input.pipe {
        input.bytes
    } else {
        return Ok(Handed::Unchanged(done));
    };
    let memfd = unnamed(&bytes).map_err(Problem::Write)?;
    let fd = memfd.as_raw_fd();
    // Open across the exec, for the real runtime to read; it closes it
    // before the container's process runs (runc's and crun's
    // close-from-3+preserve-fds), and being the lowest free number it
    // falls outside any range of descriptors the caller preserves.
    std::mem::forget(memfd);
    let arg = file.renamed(format!("/proc/self/fd/{fd}").as_ref());
    Ok(Handed::Read { arg, done })
}

/// A memfd holding `bytes`, without close-on-exec.
fn unnamed(bytes: &[u8]) -> io::Result<File> {
    // SAFETY: a C string literal and flags; the kernel returns a new
    // descriptor or -1.
    let fd = unsafe { libc::memfd_create(c"eatmydata-process".as_ptr(), 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just made and is owned by nothing else.
    let mut file = unsafe { File::from_raw_fd(fd) };
    file.write_all(bytes)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::path::PathBuf;

    /// An edit that sets a variable, unless the process turns it off.
    fn edit(value: &mut Value) -> Result<Done, String> {
        let env = value["env"].as_array_mut().ok_or("no env")?;
        if env.iter().any(|e| e == "EATMYDATA_DISABLE=1") {
            return Ok(Done::Off("EATMYDATA_DISABLE in its environment"));
        }
        env.push("LD_PRELOAD=/l.so".into());
        Ok(Done::Exec { preload: Ok(()) })
    }

    fn named(path: PathBuf) -> ProcessFile {
        ProcessFile {
            path,
            at: 0,
            prefix: b"--process=".to_vec(),
        }
    }

    fn read_back(arg: &OsString) -> Vec<u8> {
        let path = arg.to_str().unwrap().strip_prefix("--process=").unwrap();
        let mut bytes = Vec::new();
        File::open(path).unwrap().read_to_end(&mut bytes).unwrap();
        bytes
    }

    #[test]
    fn a_pipe_is_handed_on_whole() {
        let mut fds = [0; 2];
        // SAFETY: a two-int array for pipe(2).
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both descriptors are new and ours.
        let (read, mut write) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
        let text = br#"{"args": ["/bin/true"], "env": ["EATMYDATA_DISABLE=1"]}"#;
        write.write_all(text).unwrap();
        drop(write);
        let path = PathBuf::from(format!("/proc/self/fd/{}", read.as_raw_fd()));
        let Handed::Read { arg, done } = hand_on(&named(path), edit).unwrap() else {
            panic!("a pipe's bytes are always handed on");
        };
        assert!(matches!(done, Done::Off(_)));
        assert_eq!(read_back(&arg), text);
    }

    #[test]
    fn a_regular_file_is_never_written() {
        let dir = std::env::temp_dir().join(format!("eatmydata-process-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("process.json");
        let text = br#"{"args": ["/bin/true"], "env": ["PATH=/bin"]}"#;
        std::fs::write(&path, text).unwrap();
        let Handed::Read { arg, done } = hand_on(&named(path.clone()), edit).unwrap() else {
            panic!("edited");
        };
        assert!(done.changed());
        let handed: Value = serde_json::from_slice(&read_back(&arg)).unwrap();
        assert!(
            handed["env"].to_string().contains("LD_PRELOAD="),
            "{handed}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), text);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
