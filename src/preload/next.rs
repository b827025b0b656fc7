//! The next definition of each function the library calls on, the one libc
//! (or a library preloaded after us) provides, found with `dlsym(RTLD_NEXT)`
//! on first use; and [`raw`], the kernel call the library makes for its own
//! checks.
//!
//! A hook can run before any constructor -- another preloaded library's
//! constructor may call `open` -- and from many threads at once, so the lazy
//! path is the real one: each cache is an atomic pointer, written with
//! whatever dlsym answered. Two threads racing store the same value, so there
//! is no lock and nothing to allocate, as in rustix's `weak.rs`.
//!
//! The library's own kernel calls go through libc's `syscall`, found here:
//! the library exports `syscall` itself, and a call by name would come back
//! into its own hook.

use core::ffi::{CStr, c_char, c_int, c_long, c_void};
use core::marker::PhantomData;
use core::mem;
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};

use crate::errno;

unsafe extern "C" {
    /// `dlsym(RTLD_NEXT, name)`, called from the shim so that "next" means
    /// after libeatmydata.so, and bound to the oldest dlsym version there.
    fn eatmydata_dlsym_next(name: *const c_char) -> *mut c_void;
}

/// What a cache holds once dlsym has said there is no such function, so that
/// a missing one is not looked up (and an error string allocated) each call.
const ABSENT: *mut c_void = ptr::without_provenance_mut(1);

/// Returns the next definition of `name`, caching it in `*cache`; null when
/// there is none, so the caller fails the call instead of crashing.
///
/// # Safety
/// `cache` must point to a pointer-sized static that only this function
/// accesses, and `name` to a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_next(
    cache: *mut *mut c_void,
    name: *const c_char,
) -> *mut c_void {
    // SAFETY: the caller gives an aligned static used only atomically here.
    let cache = unsafe { AtomicPtr::from_ptr(cache) };
    match cache.load(Ordering::Acquire) {
        ABSENT => ptr::null_mut(),
        found if !found.is_null() => found,
        _ => {
            // SAFETY: `name` is NUL-terminated, as the caller promised.
            let found = unsafe { eatmydata_dlsym_next(name) };
            cache.store(
                if found.is_null() { ABSENT } else { found },
                Ordering::Release,
            );
            found
        }
    }
}

/// The cached next definition of one function, of pointer type `F`.
pub struct Next<F> {
    name: &'static CStr,
    cache: AtomicPtr<c_void>,
    kind: PhantomData<F>,
}

impl<F: Copy> Next<F> {
    /// A cache for `name`.
    ///
    /// # Safety
    /// `F` must be an `unsafe extern "C" fn` type matching the C prototype
    /// of the function called `name`.
    pub const unsafe fn new(name: &'static CStr) -> Self {
        const { assert!(mem::size_of::<F>() == mem::size_of::<*mut c_void>()) };
        Self {
            name,
            cache: AtomicPtr::new(ptr::null_mut()),
            kind: PhantomData,
        }
    }

    /// The next definition, or `None` when libc has none.
    pub fn get(&self) -> Option<F> {
        // SAFETY: the cache is ours alone, and the name is a C string.
        let found = unsafe { eatmydata_next(self.cache.as_ptr(), self.name.as_ptr()) };
        if found.is_null() {
            return None;
        }
        // SAFETY: `new`'s contract: F is the function pointer type of the
        // symbol dlsym found, and the same size as the pointer.
        Some(unsafe { mem::transmute_copy::<*mut c_void, F>(&found) })
    }
}

type SyscallFn = unsafe extern "C" fn(c_long, ...) -> c_long;

// SAFETY: syscall(2)'s prototype.
static SYSCALL: Next<SyscallFn> = unsafe { Next::new(c"syscall") };

/// libc's own `syscall(2)`: -1 with errno set on failure, ENOSYS when libc
/// has none.
pub fn raw(number: c_long, a: [c_long; 6]) -> c_long {
    let Some(next) = SYSCALL.get() else {
        return errno::missing().into();
    };
    // SAFETY: glibc's and musl's syscall read six longs whatever the number;
    // an unknown number fails with ENOSYS.
    unsafe { next(number, a[0], a[1], a[2], a[3], a[4], a[5]) }
}

/// `eatmydata_kernel`: [`raw`] for the shim's own kernel calls.
///
/// # Safety
/// `args` points to six longs, and the call is one the kernel may be asked
/// for with them.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_kernel(number: c_long, args: *const [c_long; 6]) -> c_long {
    // SAFETY: the shim passes an array of six.
    raw(number, unsafe { *args })
}

/// Opens one of the library's own files (`/proc/self/maps`, a report or
/// flush list) by the kernel, close-on-exec: the descriptor, or `None`.
pub fn open_own(path: &CStr, flags: c_int) -> Option<c_long> {
    let flags = flags | libc::O_CLOEXEC;
    let at = libc::AT_FDCWD.into();
    let fd = raw(
        libc::SYS_openat,
        [at, path.as_ptr() as c_long, flags.into(), 0, 0, 0],
    );
    (fd >= 0).then_some(fd)
}

/// Appends `bytes` to the file at `path`, which must exist, with one
/// `write(2)` on an `O_APPEND` descriptor: lines appended by processes at
/// the same time do not interleave.
pub fn append_own(path: &CStr, bytes: &[u8]) {
    if let Some(fd) = open_own(path, libc::O_WRONLY | libc::O_APPEND) {
        raw(
            libc::SYS_write,
            [fd, bytes.as_ptr() as c_long, bytes.len() as c_long, 0, 0, 0],
        );
        close_own(fd);
    }
}

/// Reads from one of the library's own descriptors into `buffer`.
pub fn read_own(fd: c_long, buffer: &mut [u8]) -> c_long {
    let (at, len) = (buffer.as_mut_ptr() as c_long, buffer.len() as c_long);
    raw(libc::SYS_read, [fd, at, len, 0, 0, 0])
}

/// Closes one of the library's own descriptors.
pub fn close_own(fd: c_long) {
    raw(libc::SYS_close, [fd, 0, 0, 0, 0, 0]);
}

/// Looks up what [`raw`] needs, for the constructor's warm-up.
pub fn warm_up() {
    SYSCALL.get();
}

/// One `process_vm_readv` (or `_writev`) between this process's `local`
/// buffers and `remote` ranges of its own memory, as the kernel would read
/// or write a caller's argument: false where not every byte could be moved
/// (an address the kernel would answer with EFAULT, or a filter that
/// forbids the call). errno is left as it was.
fn transfer(number: c_long, local: &[libc::iovec], remote: &[libc::iovec]) -> bool {
    let total: usize = local.iter().map(|part| part.iov_len).sum();
    let saved = errno::get();
    let pid = raw(libc::SYS_getpid, [0; 6]);
    let moved = raw(
        number,
        [
            pid,
            local.as_ptr() as c_long,
            local.len() as c_long,
            remote.as_ptr() as c_long,
            remote.len() as c_long,
            0,
        ],
    );
    errno::set(saved);
    moved == total as c_long
}

/// An iovec for `len` bytes at address `at`.
pub fn range(at: usize, len: usize) -> libc::iovec {
    libc::iovec {
        iov_base: ptr::without_provenance_mut(at),
        iov_len: len,
    }
}

/// Copies `buffer.len()` bytes from address `from` of this process into
/// `buffer`; false, with errno untouched, where they cannot be read.
pub fn copy_from_caller(buffer: &mut [u8], from: usize) -> bool {
    let local = [libc::iovec {
        iov_base: buffer.as_mut_ptr().cast(),
        iov_len: buffer.len(),
    }];
    transfer(
        libc::SYS_process_vm_readv,
        &local,
        &[range(from, buffer.len())],
    )
}

/// Fills each of `parts` from the address beside it in `from` (as many as
/// there are parts); false where one cannot be read.
pub fn gather_from_caller<const N: usize>(parts: &mut [[u8; N]], from: &[usize]) -> bool {
    let mut local = [range(0, 0); 64];
    let mut remote = [range(0, 0); 64];
    let mut count = 0;
    for ((part, &at), (mine, theirs)) in parts
        .iter_mut()
        .zip(from)
        .zip(local.iter_mut().zip(remote.iter_mut()))
    {
        *mine = libc::iovec {
            iov_base: part.as_mut_ptr().cast(),
            iov_len: N,
        };
        *theirs = range(at, N);
        count += 1;
    }
    let (Some(local), Some(remote)) = (local.get(..count), remote.get(..count)) else {
        return false;
    };
    count == parts.len() && transfer(libc::SYS_process_vm_readv, local, remote)
}

/// Copies `bytes` to address `to` of this process; false, with errno
/// untouched, where they cannot be written.
pub fn copy_to_caller(to: usize, bytes: &[u8]) -> bool {
    let local = [range(bytes.as_ptr() as usize, bytes.len())];
    transfer(
        libc::SYS_process_vm_writev,
        &local,
        &[range(to, bytes.len())],
    )
}
