//! What the command's program is, for the library: the ELF reader's facts
//! (static, Go, 32-bit, whose loader), and whether the library found can be
//! loaded into it when it is a musl program. musl's loader kills a program
//! whose preload it opens but cannot relocate, so a library built against
//! glibc's headers alone (Debian's libeatmydata, or an old build of this
//! one) must never reach a musl program.

use std::fs;
use std::path::Path;

use crate::elf::{self, Foreign, Kind, Loader};

/// Names, in a library's dynamic tables, that musl's loader cannot resolve
/// and that libraries built for glibc alone need: glibc's `pthread_atfork`
/// stub, its fortified printf, its own loader as a dependency.
const NOT_IN_MUSL: &[&[u8]] = &[
    b"\0__register_atfork\0",
    b"\0__fprintf_chk\0",
    b"\0ld-linux-",
];

/// The kind of `program`, given the library that would be preloaded.
pub fn kind(program: &Path, library: &Path) -> Kind {
    let facts = elf::inspect(program);
    match facts.kind {
        Kind::Dynamic if facts.loader == Some(Loader::Musl) && !fits_musl(library) => {
            Kind::Foreign(Foreign::LibraryNotForMusl)
        }
        kind => kind,
    }
}

/// Whether musl's loader can relocate `library` (an unreadable one is
/// left to the loader, which skips what it cannot open).
fn fits_musl(library: &Path) -> bool {
    let Ok(bytes) = fs::read(library) else {
        return true;
    };
    !NOT_IN_MUSL
        .iter()
        .any(|name| bytes.windows(name.len()).any(|window| window == *name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_built_for_glibc_alone_does_not_fit_musl() {
        let dir = std::env::temp_dir().join(format!("eatmydata-target-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let old = dir.join("old.so");
        fs::write(
            &old,
            b"\x7fELF...\0pthread_atfork\0__register_atfork\0fsync\0",
        )
        .unwrap();
        let ours = dir.join("ours.so");
        fs::write(&ours, b"\x7fELF...\0pthread_atfork\0fsync\0").unwrap();
        assert!(!fits_musl(&old));
        assert!(fits_musl(&ours));
        assert!(fits_musl(&dir.join("absent.so")));
        fs::remove_dir_all(&dir).unwrap();
    }
}
