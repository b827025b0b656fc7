//! Whose loader a program's `PT_INTERP` names, by its file name: the exec
//! rule's and the ELF reader's one answer. No dependencies: included with
//! `#[path]` by `crates/elf` as well.

/// A program's loader, by its `PT_INTERP` file name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loader {
    /// glibc's `ld-linux*.so.*` or `ld64.so.*`.
    Glibc,
    /// musl's `ld-musl-ARCH.so.1`.
    Musl,
    /// Any other: not one the library is made and tested for.
    Other,
}

impl Loader {
    /// The loader a `PT_INTERP` path names, by its file name.
    pub fn named(path: &[u8]) -> Loader {
        let file = path.rsplit(|&b| b == b'/').next().unwrap_or_default();
        if file.starts_with(b"ld-musl-") {
            Loader::Musl
        } else if file.starts_with(b"ld-linux") || file.starts_with(b"ld64.so.") {
            Loader::Glibc
        } else {
            Loader::Other
        }
    }
}
