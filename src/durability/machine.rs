//! This machine's ELF `e_machine`, for the question "is this program
//! this machine's?": the ELF reader's and the exec rule's. No
//! dependencies: included with `#[path]` by `crates/elf` as well.

/// This machine's `e_machine`, where known: a program of another is run
/// by an emulator (qemu-user through binfmt_misc), with a loader of its own.
pub const NATIVE_MACHINE: Option<u16> = if cfg!(target_arch = "x86_64") {
    Some(62)
} else if cfg!(target_arch = "aarch64") {
    Some(183)
} else if cfg!(target_arch = "riscv64") {
    Some(243)
} else if cfg!(target_arch = "powerpc64") {
    Some(21)
} else if cfg!(target_arch = "s390x") {
    Some(22)
} else {
    None
};

/// Whether `e_machine` is this machine's (any, where it is not known).
pub const fn native(machine: u16) -> bool {
    match NATIVE_MACHINE {
        Some(native) => native == machine,
        None => true,
    }
}
