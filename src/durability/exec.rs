//! Whether a program about to be executed keeps the library in its
//! `LD_PRELOAD`, and where: one rule for the runtime's edit (the
//! container's first program, at `create` and `exec`) and the library's
//! exec wrapper (every program a process starts afterwards).
//!
//! The library shows or breaks where the loader that reads `LD_PRELOAD`
//! cannot load it or must not: a 32-bit or foreign program's loader prints
//! "wrong ELF class" on stderr; a sanitizer runtime exits unless it comes
//! first; `ldd` (`LD_TRACE_LOADED_OBJECTS`) would list it; in a chroot
//! where its path leads elsewhere the loader prints "cannot open shared
//! object file". A static program reads no `LD_PRELOAD`, and its own
//! execs never pass through the library, so what it starts would inherit
//! the entry without a check: it goes there too, unless every loader of
//! its root takes the library (which only the runtime can tell, having
//! read the container's rootfs). Wherever the library goes,
//! the seccomp rules of a container (or the command's plain filter on a
//! host) still answer the syncs. Pure functions, no allocation: the
//! library runs them inside other programs.

pub use super::loader::Loader;
use super::sanitizer::is_sanitizer_path;

/// What a program's ELF file says, as far as `LD_PRELOAD` is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Image {
    /// `ELFCLASS64`: the library's class on a 64-bit machine.
    pub bits64: bool,
    /// `e_machine` is this machine's.
    pub native: bool,
    /// Its loader (`PT_INTERP`), or none: a static program.
    pub loader: Option<Loader>,
    /// A sanitizer runtime among its `DT_NEEDED`.
    pub sanitizer: bool,
}

/// What the program is started with, besides its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Context {
    /// A sanitizer runtime among the user's own `LD_PRELOAD` entries.
    pub user_sanitizer: bool,
    /// `LD_TRACE_LOADED_OBJECTS` is set: `ldd` lists, nothing runs.
    pub tracing: bool,
    /// The library's path, in the root the program runs in, is the library.
    pub here: bool,
    /// musl's loader can relocate the library.
    pub fits_musl: bool,
    /// The program is a loader that runs another program with this
    /// `LD_PRELOAD`: valgrind's tool (static, started by its launcher,
    /// which sets `VALGRIND_LAUNCHER`), a dynamic loader run by its name
    /// (`ld-linux-x86-64.so.2 PROGRAM`). See [`launches`].
    pub launcher: bool,
    /// Every loader the program's root holds takes the library (this
    /// machine's glibc, a musl that fits) and no sanitizer runtime is
    /// there: whatever a static program starts can have it, or is static
    /// too. Only the runtime knows, having read the container's rootfs
    /// before it starts (`runtime/edit/program/loaders.rs`); the library,
    /// inside a program, answers `false`.
    pub root_fits: bool,
}

/// Whether the program at `path` (started with `VALGRIND_LAUNCHER` in its
/// environment or not) is a loader for another: it reads no `LD_PRELOAD`
/// for itself, but the program it runs does, so the rule for static
/// programs is not for it.
pub fn launches(path: &[u8], valgrind: bool) -> bool {
    valgrind || Loader::named(path) != Loader::Other
}

/// Why the library leaves `LD_PRELOAD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    Static,
    Bits32,
    Machine,
    Sanitizer,
    Loader,
    Musl,
    Tracing,
    Elsewhere,
}

impl Why {
    /// Every reason, in the order of [`Why::code`].
    pub const ALL: [Why; 8] = [
        Why::Static,
        Why::Bits32,
        Why::Machine,
        Why::Sanitizer,
        Why::Loader,
        Why::Musl,
        Why::Tracing,
        Why::Elsewhere,
    ];

    /// One ASCII digit naming the reason, for a message to another
    /// process (`preload/spawn.rs`); [`Why::of_code`] reads it back.
    pub const fn code(self) -> u8 {
        b'0' + self as u8
    }

    /// The reason [`Why::code`] wrote as `code`.
    pub fn of_code(code: u8) -> Option<Why> {
        Why::ALL.get(usize::from(code.checked_sub(b'0')?)).copied()
    }

    /// The log's words: what the program is.
    pub const fn words(self) -> &'static str {
        match self {
            Why::Static => "a static program, whose own children would inherit it unchecked",
            Why::Bits32 => "a 32-bit program, which the 64-bit library cannot load into",
            Why::Machine => "built for another architecture",
            Why::Sanitizer => {
                "linked with a sanitizer runtime that must come first in the library list"
            }
            Why::Loader => "run by a loader that is neither glibc's nor musl's",
            Why::Musl => "a musl program, and the library needs a name musl does not have",
            Why::Tracing => "traced by ldd (LD_TRACE_LOADED_OBJECTS), which would list it",
            Why::Elsewhere => "run in a root where the library's path is not the library",
        }
    }
}

/// Where the library goes in the program's `LD_PRELOAD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// First, before the user's entries.
    First,
    /// Right after the user's last sanitizer runtime, which must come first.
    AfterSanitizer,
    /// Nowhere.
    Out(Why),
}

/// Where the library goes for a program whose file is `image` (`None`: no
/// ELF file could be read, and the program is taken as this machine's,
/// the usual case), started in `context`.
pub const fn place(image: Option<Image>, context: Context) -> Place {
    if context.tracing {
        return Place::Out(Why::Tracing);
    }
    if !context.here {
        return Place::Out(Why::Elsewhere);
    }
    if let Some(image) = image {
        let Some(loader) = image.loader else {
            if context.launcher || context.root_fits {
                return behind_sanitizer(context);
            }
            return Place::Out(Why::Static);
        };
        if !image.bits64 && cfg!(target_pointer_width = "64") {
            return Place::Out(Why::Bits32);
        }
        if !image.native {
            return Place::Out(Why::Machine);
        }
        match loader {
            Loader::Other => return Place::Out(Why::Loader),
            Loader::Musl if !context.fits_musl => return Place::Out(Why::Musl),
            _ => {}
        }
        if image.sanitizer && !context.user_sanitizer {
            return Place::Out(Why::Sanitizer);
        }
    }
    behind_sanitizer(context)
}

/// First, or behind the user's sanitizer.
const fn behind_sanitizer(context: Context) -> Place {
    if context.user_sanitizer {
        Place::AfterSanitizer
    } else {
        Place::First
    }
}

/// The entries of an `LD_PRELOAD` list: the loader splits at spaces and
/// colons alike and skips empty ones.
pub fn entries(list: &[u8]) -> impl Iterator<Item = &[u8]> {
    list.split(|&b| b == b' ' || b == b':')
        .filter(|entry| !entry.is_empty())
}

/// Whether one of `list`'s entries is a sanitizer runtime.
pub fn has_sanitizer(list: &[u8]) -> bool {
    entries(list).any(is_sanitizer_path)
}

/// Writes into `out` the list `list` with `ours` (an entry, exactly)
/// where `place` puts it, the other entries in their order, joined by the
/// separator `list` uses (a colon if it has colons and no space, else a
/// space). `None` when that is `list` itself or does not fit in `out`;
/// else the length written (0: no entry left, the variable goes).
pub fn arranged(list: &[u8], ours: &[u8], place: Place, out: &mut [u8]) -> Option<usize> {
    let colon = list.contains(&b':') && !list.contains(&b' ');
    let separator = if colon { b':' } else { b' ' };
    let after = entries(list)
        .enumerate()
        .filter(|&(_, entry)| is_sanitizer_path(entry))
        .map(|(at, _)| at)
        .last();
    let mut writer = Writer { out, len: 0 };
    let add = |entry: &[u8], writer: &mut Writer| {
        if writer.len > 0 {
            writer.put(&[separator])?;
        }
        writer.put(entry)
    };
    if place == Place::First || (place == Place::AfterSanitizer && after.is_none()) {
        add(ours, &mut writer)?;
    }
    for (at, entry) in entries(list).enumerate() {
        if entry != ours {
            add(entry, &mut writer)?;
        }
        if place == Place::AfterSanitizer && after == Some(at) {
            add(ours, &mut writer)?;
        }
    }
    let len = writer.len;
    (out.get(..len)? != list).then_some(len)
}

/// Bytes appended to a buffer, failing when it is full.
struct Writer<'a> {
    out: &'a mut [u8],
    len: usize,
}

impl Writer<'_> {
    fn put(&mut self, bytes: &[u8]) -> Option<()> {
        let end = self.len.checked_add(bytes.len())?;
        self.out.get_mut(self.len..end)?.copy_from_slice(bytes);
        self.len = end;
        Some(())
    }
}

#[cfg(test)]
#[path = "exec/tests.rs"]
mod tests;
