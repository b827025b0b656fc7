//! The `LD_PRELOAD` a command gets: our library first, then whatever the
//! caller had, as it was.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::error::Error;

pub const VARIABLE: &str = "LD_PRELOAD";

/// The loader splits `LD_PRELOAD` at spaces and colons.
fn is_separator(byte: &u8) -> bool {
    matches!(byte, b' ' | b':')
}

/// `LD_PRELOAD` with `library` in front of `existing`. Already in front (a
/// nested eatmydata), it is not added twice.
pub fn with_library(library: &Path, existing: Option<&OsStr>) -> Result<OsString, Error> {
    let ours = library.as_os_str();
    if ours.as_bytes().iter().any(is_separator) {
        return Err(Error::LibraryPath(library.to_owned()));
    }
    let existing = existing.unwrap_or_default();
    let first = existing
        .as_bytes()
        .split(is_separator)
        .find(|item| !item.is_empty());
    if first == Some(ours.as_bytes()) {
        return Ok(existing.to_owned());
    }
    let mut value = ours.to_owned();
    if !existing.is_empty() {
        value.push(":");
        value.push(existing);
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preload(existing: Option<&str>) -> String {
        let value =
            with_library(Path::new("/l/libeatmydata.so"), existing.map(OsStr::new)).unwrap();
        value.into_string().unwrap()
    }

    #[test]
    fn goes_in_front_of_what_was_there() {
        assert_eq!(preload(None), "/l/libeatmydata.so");
        assert_eq!(preload(Some("")), "/l/libeatmydata.so");
        assert_eq!(preload(Some("a.so b.so")), "/l/libeatmydata.so:a.so b.so");
        assert_eq!(preload(Some("a.so:b.so")), "/l/libeatmydata.so:a.so:b.so");
    }

    #[test]
    fn is_not_added_twice() {
        assert_eq!(
            preload(Some("/l/libeatmydata.so:a.so")),
            "/l/libeatmydata.so:a.so"
        );
        assert_eq!(preload(Some(" /l/libeatmydata.so")), " /l/libeatmydata.so");
        assert_eq!(
            preload(Some("a.so /l/libeatmydata.so")),
            "/l/libeatmydata.so:a.so /l/libeatmydata.so"
        );
    }

    #[test]
    fn refuses_a_path_the_loader_would_split() {
        let error = with_library(Path::new("/my libs/libeatmydata.so"), None).unwrap_err();
        assert_eq!(error.exit_code(), 125);
    }
}
