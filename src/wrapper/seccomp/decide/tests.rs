use super::*;

const USER: Ids = Ids {
    ruid: 1000,
    rgid: 1000,
    euid: 1000,
    egid: 1000,
};
const ROOT: Ids = Ids {
    ruid: 0,
    rgid: 0,
    euid: 0,
    egid: 0,
};

#[test]
fn set_id_bits_count_only_when_they_change_who_runs() {
    let suid = libc::S_ISUID | 0o755;
    let sgid = libc::S_ISGID | 0o755;
    assert_eq!(set_id_bit(suid, 0, 0, USER), Some("setuid"));
    assert_eq!(set_id_bit(sgid, 0, 42, USER), Some("setgid"));
    assert_eq!(set_id_bit(0o755, 0, 0, USER), None);
    // Root running setuid-root sudo: the loader reads LD_PRELOAD as usual.
    assert_eq!(set_id_bit(suid, 0, 0, ROOT), None);
    // A user's own setuid program changes nothing for that user.
    assert_eq!(set_id_bit(suid, 1000, 1000, USER), None);
    // Set-group-ID without group execute is mandatory locking.
    assert_eq!(set_id_bit(libc::S_ISGID | 0o745, 0, 42, USER), None);
}

fn notices(choice: Choice, kind: Kind, set_id: Option<&str>) -> (bool, usize) {
    let decision = decide(choice, OsStr::new("prog"), kind, set_id);
    (decision.seccomp, decision.notices.len())
}

#[test]
fn static_go_and_own_ring_programs_turn_seccomp_on_and_say_so_once() {
    for kind in [Kind::Static, Kind::Go, Kind::EntersUring] {
        assert_eq!(notices(Choice::Auto, kind, None), (true, 1), "{kind:?}");
        assert_eq!(notices(Choice::On, kind, None), (true, 0), "{kind:?}");
        assert_eq!(notices(Choice::Off, kind, None), (false, 0), "{kind:?}");
    }
    let decision = decide(Choice::Auto, OsStr::new("gobin"), Kind::Go, None);
    assert!(decision.notices[0].contains("gobin is a Go program"));
    assert!(decision.notices[0].contains("--no-seccomp"));
    let decision = decide(Choice::Auto, OsStr::new("fio"), Kind::EntersUring, None);
    assert!(decision.notices[0].contains("fio is dynamically linked but makes its own"));
}

#[test]
fn programs_the_library_cannot_load_into_are_treated_as_static() {
    use crate::elf::Foreign;
    for why in [
        Foreign::Bits32,
        Foreign::UnknownLoader,
        Foreign::LibraryNotForMusl,
        Foreign::Machine,
        Foreign::Sanitizer,
    ] {
        let kind = Kind::Foreign(why);
        assert_eq!(notices(Choice::Auto, kind, None), (true, 1), "{why:?}");
        assert_eq!(notices(Choice::Off, kind, None), (false, 0), "{why:?}");
    }
    let decision = decide(
        Choice::Auto,
        OsStr::new("prog32"),
        Kind::Foreign(Foreign::Bits32),
        None,
    );
    assert!(decision.notices[0].starts_with("prog32 is a 32-bit program"));
}

#[test]
fn the_no_new_privs_advice_fits_who_we_are() {
    assert!(no_new_privs_notice(false).ends_with("run eatmydata as root to avoid this"));
    let root = no_new_privs_notice(true);
    assert!(root.contains("lacks CAP_SYS_ADMIN") && !root.contains("run eatmydata as root"));
}

#[test]
fn dynamic_programs_get_seccomp_only_when_asked() {
    for kind in [Kind::Dynamic, Kind::Unknown] {
        assert_eq!(notices(Choice::Auto, kind, None), (false, 0));
        assert_eq!(notices(Choice::On, kind, None), (true, 0));
        assert_eq!(notices(Choice::Off, kind, None), (false, 0));
    }
}

#[test]
fn set_id_commands_are_named_with_the_order_that_works() {
    let decision = decide(
        Choice::Auto,
        OsStr::new("sudo"),
        Kind::Static,
        Some("setuid"),
    );
    assert!(
        !decision.seccomp,
        "no_new_privs would break a setuid program"
    );
    assert_eq!(decision.notices.len(), 1);
    assert!(decision.notices[0].contains("sudo is setuid"));
    assert!(decision.notices[0].contains("'sudo eatmydata COMMAND...'"));
    assert_eq!(
        notices(Choice::On, Kind::Dynamic, Some("setgid")),
        (true, 1)
    );
}
