//! The copy of libeatmydata.so this command carries: its bytes, its name,
//! and how it is checked and written in a folder already trusted (the
//! placed copy, `place.rs`; the temporary write-out, `embedded.rs`).
//!
//! `build/embed.rs` builds it and names it by its SHA-256.

use std::fs::{File, Permissions};
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;

use super::at::{open_at, rename_at, unlink_at};
use super::trust::{Trust, file_fits};

/// The library, as built with the command (empty if built without it).
pub static BYTES: &[u8] = include_bytes!(env!("EATMYDATA_EMBEDDED_FILE"));
/// Its SHA-256, in hexadecimal (empty if built without it).
pub const SHA256: &str = env!("EATMYDATA_EMBEDDED_SHA256");

/// Whether this command carries a library.
pub fn carried() -> bool {
    !BYTES.is_empty()
}

/// The file's name: two builds with other bytes never share one.
pub fn file_name() -> String {
    format!("libeatmydata-{}.so", SHA256.get(..16).unwrap_or(SHA256))
}

/// Whether `name` is the file name of a copy some build placed: the
/// prefix, 16 hexadecimal digits, `.so`.
#[allow(dead_code)] // for --remove and uninstall (decision D1)
pub fn is_a_copy_name(name: &str) -> bool {
    name.strip_prefix("libeatmydata-")
        .and_then(|rest| rest.strip_suffix(".so"))
        .is_some_and(|hash| hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Whether `name` in `dir` (a folder already trusted) is a regular file
/// of a trusted owner, writable by it alone, readable by all, that holds
/// the carried bytes.
pub fn holds(dir: &File, name: &str, trust: &Trust) -> bool {
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    let Ok(file) = open_at(dir, name, flags, 0) else {
        return false;
    };
    let Ok(meta) = file.metadata() else {
        return false;
    };
    if !file_fits(&meta, trust) || meta.len() != BYTES.len() as u64 {
        return false;
    }
    // Its length is ours already (fstat): one read of exactly that many
    // bytes, and no one but a trusted owner can write to it meanwhile.
    let mut bytes = vec![0; BYTES.len()];
    (&file).read_exact(&mut bytes).is_ok() && bytes == BYTES
}

/// Writes the library to a fresh name in `dir`, then renames it to `name`:
/// a reader sees the whole file or none, and whatever was at `name` (a
/// link, other bytes, a copy cut short) is replaced, never followed.
pub fn write(dir: &File, name: &str) -> io::Result<()> {
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let (temporary, mut file) = (0..100)
        .map(|n| format!(".{name}.{}.{n}", std::process::id()))
        .find_map(|temporary| match open_at(dir, &temporary, flags, 0o644) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => None,
            opened => Some(opened.map(|file| (temporary, file))),
        })
        .unwrap_or_else(|| Err(io::ErrorKind::AlreadyExists.into()))?;
    let written = file
        .write_all(BYTES)
        .and_then(|()| file.set_permissions(Permissions::from_mode(0o644)))
        .and_then(|()| rename_at(dir, &temporary, name));
    if written.is_err() {
        let _ = unlink_at(dir, &temporary, false);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_carries_the_hash() {
        assert!(carried(), "built without the library (EATMYDATA_EMBED=0)");
        assert_eq!(SHA256.len(), 64);
        assert_eq!(file_name(), format!("libeatmydata-{}.so", &SHA256[..16]));
        assert!(is_a_copy_name(&file_name()));
        assert!(!is_a_copy_name("libeatmydata.so"));
        assert!(!is_a_copy_name("libeatmydata-0123456789abcdeg.so"));
    }
}
