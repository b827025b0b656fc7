//! The names libeatmydata.so exports: one trampoline per interposed libc
//! function, jumping to its hook in the C shim (`eatmydata_hook_NAME`).
//!
//! Why trampolines: rustc links a cdylib with a version script of its own
//! that exports only what Rust defines, and GNU ld refuses a second one
//! ("anonymous version tag cannot be combined with other version tags"), so
//! the C names cannot be exported by a script of ours. A naked function is
//! Rust-defined, so rustc exports it, unversioned -- a program's reference
//! to `fsync@GLIBC_2.2.5` binds to it -- and it is nothing but a jump: the
//! C hook runs with the caller's registers and return address, variadic
//! arguments included, and no Rust frame is ever on the stack.

/// Jumps to the C hook of `$name`, leaving every register untouched.
#[cfg(target_arch = "x86_64")]
macro_rules! jump_to_hook {
    ($name:ident) => {
        // endbr64 marks a valid indirect-branch target for CET; elsewhere a nop.
        core::arch::naked_asm!(concat!("endbr64\njmp eatmydata_hook_", stringify!($name)))
    };
}

#[cfg(target_arch = "aarch64")]
macro_rules! jump_to_hook {
    ($name:ident) => {
        // bti c marks a valid indirect-call target; elsewhere a nop.
        core::arch::naked_asm!(concat!("bti c\nb eatmydata_hook_", stringify!($name)))
    };
}

macro_rules! trampolines {
    ($($name:ident)*) => {$(
        #[doc = concat!("`", stringify!($name), "`: the hook in `c/shim.c`.")]
        ///
        /// # Safety
        /// Called by programs under the contract of the libc function of
        /// that name, whose arguments reach the hook untouched.
        #[unsafe(naked)]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name() {
            jump_to_hook!($name)
        }
    )*};
}

// The list tests/integration/symbols.rs compares with `nm -D`.
trampolines! {
    fsync fdatasync sync syncfs sync_file_range msync
    open open64 openat openat64
    __open_2 __open64_2 __openat_2 __openat64_2
    pwritev2 pwritev64v2
    fcntl fcntl64
    syscall
    aio_fsync aio_fsync64 io_getevents
    mmap mmap64 munmap
    io_uring_submit io_uring_submit_and_wait io_uring_submit_and_wait_timeout
    io_uring_submit_and_get_events io_uring_wait_cqes io_uring_wait_cqe_timeout
    io_uring_register_files io_uring_register_files_tags io_uring_register_files_sparse
    io_uring_register_files_update io_uring_register_files_update_tag
    io_uring_unregister_files io_uring_register
    io_uring_queue_init io_uring_queue_init_params io_uring_queue_mmap io_uring_queue_exit
    execve execv execvpe execvp fexecve execveat execl execlp execle posix_spawn posix_spawnp
}
