use super::*;
use libc::{
    O_ACCMODE, O_CLOEXEC, O_CREAT, O_DIRECT, O_DIRECTORY, O_DSYNC, O_NOFOLLOW, O_PATH, O_RDONLY,
    O_RDWR, O_SYNC, O_TMPFILE, O_TRUNC, O_WRONLY,
};

const DROPPED: i32 = O_SYNC | O_DSYNC | O_DIRECT;

fn how(flags: i32, mode: u64, resolve: u64) -> Open {
    Open::How(OpenHow {
        flags: bit(flags),
        mode,
        resolve,
    })
}

#[test]
fn o_path_in_openat2_takes_three_flags_and_open_ignores_the_rest() {
    let path = O_PATH | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW;
    assert!(open_accepted(how(path, 0, 0)));
    for extra in [O_SYNC, O_DSYNC, O_DIRECT, O_RDWR, O_TRUNC] {
        let asked = how(O_PATH | extra, 0, 0);
        assert!(!open_accepted(asked), "{extra:#o}");
        assert_eq!(kept_flags(asked, DROPPED), bit(O_PATH | extra));
        // open and openat: the kernel drops them itself.
        assert!(open_accepted(Open::Flags((O_PATH | extra) as u32)));
    }
}

#[test]
fn unknown_bits_are_refused_by_openat2_only() {
    let unknown = 1 << 30;
    assert!(!open_accepted(how(O_WRONLY | O_SYNC | unknown, 0, 0)));
    assert!(open_accepted(Open::Flags(
        (O_WRONLY | O_SYNC | unknown) as u32
    )));
    let high = OpenHow {
        flags: bit(O_WRONLY | O_SYNC) | 1 << 40,
        mode: 0,
        resolve: 0,
    };
    assert!(!open_accepted(Open::How(high)));
    assert!(!open_accepted(how(O_WRONLY | O_SYNC, 0, 1 << 6)));
    assert_eq!(
        kept_flags(Open::Flags((O_WRONLY | O_SYNC | unknown) as u32), DROPPED),
        bit(O_WRONLY | unknown)
    );
}

#[test]
fn tmpfile_needs_write_access_and_no_creat() {
    for call in [|f| Open::Flags(f as u32), |f| how(f, 0o600, 0)] {
        assert!(!open_accepted(call(O_TMPFILE | O_RDONLY | O_SYNC)));
        assert!(!open_accepted(call(O_TMPFILE | O_RDWR | O_CREAT | O_SYNC)));
        assert!(!open_accepted(call(O_DIRECTORY | O_CREAT | O_SYNC)));
        assert!(open_accepted(call(O_TMPFILE | O_WRONLY | O_SYNC)));
        assert!(open_accepted(call(O_TMPFILE | O_ACCMODE | O_SYNC)));
        // __O_TMPFILE without O_DIRECTORY.
        assert!(!open_accepted(call(TMPFILE_BIT as i32 | O_RDWR)));
    }
    assert_eq!(
        kept_flags(Open::Flags((O_TMPFILE | O_RDWR | O_SYNC) as u32), DROPPED),
        bit(O_TMPFILE | O_RDWR)
    );
}

#[test]
fn openat2_checks_its_mode_and_resolve() {
    assert!(!open_accepted(how(O_WRONLY | O_SYNC, 0o644, 0)));
    assert!(open_accepted(how(O_WRONLY | O_CREAT | O_SYNC, 0o644, 0)));
    assert!(!open_accepted(how(O_WRONLY | O_CREAT | O_SYNC, 0o10644, 0)));
    assert!(!open_accepted(how(
        O_RDONLY,
        0,
        RESOLVE_BENEATH | RESOLVE_IN_ROOT
    )));
    assert!(open_accepted(how(O_RDONLY | O_SYNC, 0, RESOLVE_CACHED)));
    assert!(!open_accepted(how(
        O_WRONLY | O_TRUNC | O_SYNC,
        0,
        RESOLVE_CACHED
    )));
    assert!(how_size_accepted(24) && how_size_accepted(4096));
    assert!(!how_size_accepted(16) && !how_size_accepted(4097));
}

/// The rule against the running kernel: every combination of the flags,
/// modes and resolve bits the checks look at, opening the test's own
/// folder. An open the rule accepts must not be refused by the checks
/// (EINVAL, or EAGAIN for RESOLVE_CACHED), and one it refuses must be.
/// O_DIRECT is left out: whether a file system takes it is decided at
/// the open, not by these checks.
#[test]
fn the_rule_agrees_with_this_kernel() {
    let dir = std::env::temp_dir().join(format!(
        "eatmydata-open-rule-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    let pieces = [
        O_CREAT,
        O_TRUNC,
        O_DIRECTORY,
        O_PATH,
        TMPFILE_BIT as i32,
        O_SYNC,
        O_DSYNC,
        O_NOFOLLOW,
        O_CLOEXEC,
        1 << 30,
        LARGEFILE as i32,
    ];
    let mut checked = 0;
    for access in [O_RDONLY, O_WRONLY, O_RDWR, O_ACCMODE] {
        for set in 0..1u32 << pieces.len() {
            let flags = pieces
                .iter()
                .enumerate()
                .filter(|(n, _)| set & 1 << n != 0)
                .fold(access, |flags, (_, piece)| flags | piece);
            for (mode, resolve) in [
                (0, 0),
                (0o600, 0),
                (0o10600, 0),
                (0, 0x18),
                (0, 0x20),
                (0, 0x40),
            ] {
                let asked = OpenHow {
                    flags: bit(flags),
                    mode,
                    resolve,
                };
                // SAFETY: a path and a struct of ours, for the call's life.
                let fd = unsafe {
                    libc::syscall(libc::SYS_openat2, libc::AT_FDCWD, path.as_ptr(), &asked, 24)
                };
                let error = std::io::Error::last_os_error().raw_os_error();
                judge(Open::How(asked), fd, error);
                if resolve == 0 {
                    // SAFETY: as above; the mode is read only with O_CREAT.
                    let fd = unsafe {
                        libc::openat(libc::AT_FDCWD, path.as_ptr(), flags, mode as libc::c_uint)
                    };
                    let error = std::io::Error::last_os_error().raw_os_error();
                    judge(Open::Flags(flags as u32), fd as i64, error);
                }
                checked += 1;
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(checked > 10_000);
}

/// Whether the kernel's answer `fd` (errno `error`) to `open` is the rule's.
fn judge(open: Open, fd: i64, error: Option<i32>) {
    let refused = fd < 0 && matches!(error, Some(libc::EINVAL | libc::EAGAIN));
    if fd >= 0 {
        // SAFETY: a descriptor this test just opened.
        unsafe { libc::close(fd as i32) };
    }
    assert_eq!(open_accepted(open), !refused, "{open:?}: {fd} {error:?}");
}
