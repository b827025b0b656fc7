//! What the command's program is, for the library: the ELF reader's facts
//! (static, Go, 32-bit, whose loader), and whether the library found can be
//! loaded into it when it is a musl program. musl's loader kills a program
//! whose preload it opens but cannot relocate, so a library built against
//! glibc's headers alone (Debian's libeatmydata, or an old build of this
//! one) must never reach a musl program.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::durability::init::Init;
use crate::elf::{self, Foreign, Kind, Loader};
use crate::search;

/// Names that musl's loader cannot resolve and that libraries built for
/// glibc alone need, strongly: glibc's `pthread_atfork` stub, its
/// fortified printf. A weak reference (ours to `__register_atfork`) is
/// left unresolved by musl, harmlessly.
const NOT_IN_MUSL: &[&[u8]] = &[b"__register_atfork", b"__fprintf_chk"];

/// glibc's loader as a dependency, which musl never provides.
const GLIBC_LOADER: &[u8] = b"\0ld-linux-";

/// The kind of `program`, given the library that would be preloaded.
pub fn kind(program: &Path, library: &Path) -> Kind {
    with_library(elf::inspect(program), library).kind
}

/// Static inits seen through, one running the next, before the last is
/// judged itself (the runtime's bound too).
const MAX_INITS: usize = 4;

/// The program the command's judged by: the command itself, or what the
/// static inits it names run (`eatmydata tini -- postgres`, `eatmydata
/// gosu USER PROGRAM`), as the runtime judges a container's process and
/// the library's exec wrapper what a process executes
/// (`durability/init.rs`).
pub struct Judged {
    /// As the command line names it (`argv[0]`), and where it is.
    pub name: OsString,
    pub path: PathBuf,
    pub kind: Kind,
    /// The inits that run it, outermost first; empty for the command.
    pub through: Vec<OsString>,
}

/// [`Judged`] for `command` with `args`, found at `program`, given the
/// library that would be preloaded. What an init runs is found in `PATH`
/// as its `execvp` finds it; one that cannot be found or read leaves the
/// init judged itself (as a static program), as before.
pub fn judged(command: &OsStr, program: &Path, args: &[OsString], library: &Path) -> Judged {
    let mut judged = Judged {
        name: command.to_owned(),
        path: program.to_owned(),
        kind: kind(program, library),
        through: Vec::new(),
    };
    let mut args = args;
    while matches!(judged.kind, Kind::Static | Kind::Go) && judged.through.len() < MAX_INITS {
        let file = judged.name.as_bytes().rsplit(|&b| b == b'/').next();
        let arg = |at: usize| Some(args.get(at)?.as_bytes());
        let Some(at) = Init::named(file.unwrap_or_default()).and_then(|init| init.program(arg))
        else {
            break;
        };
        let Some(name) = args.get(at) else {
            break;
        };
        let Ok(path) = search::resolve(name) else {
            break;
        };
        let facts = with_library(elf::inspect(&path), library);
        if facts.kind == Kind::Unknown {
            break;
        }
        judged
            .through
            .push(std::mem::replace(&mut judged.name, name.clone()));
        judged.path = path;
        judged.kind = facts.kind;
        args = args.get(at + 1..).unwrap_or_default();
    }
    judged
}

/// What the ELF reader found, with the library that would be preloaded
/// taken into account: a musl program whose loader would die of it is
/// foreign. The runtime's edit asks the same of a container's program.
pub fn with_library(facts: elf::Program, library: &Path) -> elf::Program {
    let kind = match facts.kind {
        Kind::Dynamic | Kind::EntersUring
            if facts.loader == Some(Loader::Musl) && !fits_musl(library) =>
        {
            Kind::Foreign(Foreign::LibraryNotForMusl)
        }
        kind => kind,
    };
    elf::Program { kind, ..facts }
}

/// Whether musl's loader can relocate `library` (an unreadable one is
/// left to the loader, which skips what it cannot open).
pub fn fits_musl(library: &Path) -> bool {
    let Ok(bytes) = fs::read(library) else {
        return true;
    };
    let names_loader = bytes
        .windows(GLIBC_LOADER.len())
        .any(|window| window == GLIBC_LOADER);
    let strong = match strong_undefined(&bytes) {
        Some(names) => names.iter().any(|name| NOT_IN_MUSL.contains(name)),
        // No section table to read: any mention counts.
        None => NOT_IN_MUSL.iter().any(|name| {
            let mut quoted = vec![0];
            quoted.extend_from_slice(name);
            quoted.push(0);
            bytes.windows(quoted.len()).any(|window| window == quoted)
        }),
    };
    !names_loader && !strong
}

/// The names a 64-bit little-endian ELF file's dynamic symbol table
/// refers to strongly without defining them (undefined, global binding),
/// from its section table; `None` when it cannot be read.
fn strong_undefined(bytes: &[u8]) -> Option<Vec<&[u8]>> {
    let u16_at = |at: usize| Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| {
        let value = u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?);
        usize::try_from(value).ok()
    };
    if bytes.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let (table, entry, count) = (u64_at(0x28)?, usize::from(u16_at(0x3a)?), u16_at(0x3c)?);
    let section = |index: usize| table.checked_add(index.checked_mul(entry)?);
    const SHT_DYNSYM: u32 = 11;
    let dynsym = (0..usize::from(count)).find_map(|n| {
        let at = section(n)?;
        (u32_at(at.checked_add(4)?)? == SHT_DYNSYM).then_some(at)
    })?;
    let (symbols, size) = (u64_at(dynsym + 0x18)?, u64_at(dynsym + 0x20)?);
    let strings_header = section(usize::try_from(u32_at(dynsym + 0x28)?).ok()?)?;
    let strings = bytes.get(u64_at(strings_header + 0x18)?..)?;
    let mut names = Vec::new();
    for symbol in (symbols..symbols.checked_add(size)?).step_by(24) {
        let name = usize::try_from(u32_at(symbol)?).ok()?;
        let (info, defined_in) = (*bytes.get(symbol + 4)?, u16_at(symbol + 6)?);
        const STB_GLOBAL: u8 = 1;
        if defined_in == 0 && info >> 4 == STB_GLOBAL {
            let rest = strings.get(name..)?;
            names.push(rest.split(|&b| b == 0).next()?);
        }
    }
    Some(names)
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

    /// `cc` builds a library referring to `name` strongly or weakly.
    fn library_referring_to(dir: &Path, name: &str, weak: bool) -> std::path::PathBuf {
        let source = dir.join(format!("{name}{weak}.c"));
        let attribute = if weak { "__attribute__((weak))" } else { "" };
        fs::write(
            &source,
            format!("extern int {name}(void) {attribute};\nint use(void) {{ return {name} ? {name}() : 0; }}\n"),
        )
        .unwrap();
        let out = dir.join(format!("{name}{weak}.so"));
        let status = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(&out)
            .arg(&source)
            .status()
            .unwrap();
        assert!(status.success());
        out
    }

    #[test]
    fn a_weak_reference_to_a_glibc_name_fits_musl_and_a_strong_one_does_not() {
        let dir = std::env::temp_dir().join(format!("eatmydata-weak-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let strong = library_referring_to(&dir, "__register_atfork", false);
        let weak = library_referring_to(&dir, "__register_atfork", true);
        assert!(!fits_musl(&strong));
        assert!(fits_musl(&weak));
        fs::remove_dir_all(&dir).unwrap();
    }
}
