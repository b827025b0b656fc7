use super::*;

fn unrouted() -> Route {
    Route {
        program: core::ptr::null(),
        code: [0; 4],
        path: [0; PATH_ROOM],
    }
}

#[test]
fn a_route_reads_back_its_program_reason_and_telling() {
    let mut filled = unrouted();
    assert!(read(&filled).is_none(), "an unrouted spawn reads as none");
    // The test process has no seccomp filter of its own.
    assert_eq!(
        route(&mut filled, c"/bin/prog", false, (Why::Bits32, true)),
        Ok(())
    );
    assert_eq!(read(&filled), Some((c"/bin/prog", Why::Bits32, true)));
    let mut quiet = unrouted();
    route(&mut quiet, c"/bin/prog", false, (Why::Static, false)).unwrap();
    assert_eq!(read(&quiet), Some((c"/bin/prog", Why::Static, false)));
}

/// posix_spawnp's program is the file the library's PATH search found,
/// as the set-id check must read it, not the name the caller gave.
#[test]
fn a_searched_program_is_the_file_path_gave() {
    let mut searched = unrouted();
    searched.path[..12].copy_from_slice(b"/usr/bin/ls\0");
    route(&mut searched, c"ls", true, (Why::Static, false)).unwrap();
    assert_eq!(read(&searched).unwrap().0, c"/usr/bin/ls");
    let mut unterminated = unrouted();
    unterminated.path.fill(b'a');
    assert_eq!(
        route(&mut unterminated, c"ls", true, (Why::Static, false)),
        Err(TOO_LONG)
    );
    assert!(read(&unterminated).is_none());
}
