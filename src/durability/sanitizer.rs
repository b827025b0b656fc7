//! The sanitizer runtimes that must come first in a process's list of
//! libraries: ASan, TSan, MSan, HWASan and LSan check at start-up that they
//! do and exit otherwise ("ASan runtime does not come first in initial
//! library list"). Named once for the ELF reader (a program's `DT_NEEDED`),
//! the runtime's edit and the library's exec wrapper (an `LD_PRELOAD`
//! entry). UBSan alone makes no such check, and is not here. No
//! dependencies: included with `#[path]` by `crates/elf` as well.

/// The runtimes that must come first, as the prefixes of their file names
/// (GCC's `libasan.so.8`, LLVM's `libclang_rt.asan-x86_64.so`).
const SANITIZERS: [&[u8]; 10] = [
    b"libasan",
    b"libtsan",
    b"libmsan",
    b"libhwasan",
    b"liblsan",
    b"libclang_rt.asan",
    b"libclang_rt.tsan",
    b"libclang_rt.msan",
    b"libclang_rt.hwasan",
    b"libclang_rt.lsan",
];

/// Whether a library's name (`DT_NEEDED`, or the file name of a path) is a
/// sanitizer runtime that must come first.
pub fn is_sanitizer(name: &[u8]) -> bool {
    SANITIZERS.iter().any(|prefix| {
        name.strip_prefix(*prefix)
            .is_some_and(|rest| matches!(rest.first(), Some(b'.' | b'-' | b'_')))
    })
}

/// Whether an `LD_PRELOAD` entry (a path or a bare name) is one.
pub fn is_sanitizer_path(entry: &[u8]) -> bool {
    is_sanitizer(entry.rsplit(|&b| b == b'/').next().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtimes_that_must_come_first_are_known_by_name() {
        for name in [
            "libasan.so.8",
            "libasan.so",
            "libtsan.so.2",
            "libhwasan.so.0",
            "liblsan.so.0",
            "libclang_rt.asan-x86_64.so",
            "libclang_rt.asan.so",
            "libclang_rt.msan-x86_64.so",
        ] {
            assert!(is_sanitizer(name.as_bytes()), "{name}");
        }
        for name in [
            "libc.so.6",
            "libasanity.so",
            "libubsan.so.1",
            "libtsanx",
            "libasan",
        ] {
            assert!(!is_sanitizer(name.as_bytes()), "{name}");
        }
        assert!(is_sanitizer_path(b"/usr/lib/x86_64-linux-gnu/libasan.so.8"));
        assert!(is_sanitizer_path(b"libasan.so.8"));
        assert!(!is_sanitizer_path(b"/opt/libasan.so.8/libc.so.6"));
    }
}
