use super::*;

const NATIVE: Image = Image {
    bits64: true,
    native: true,
    loader: Some(Loader::Glibc),
    sanitizer: false,
};

const PLAIN: Context = Context {
    user_sanitizer: false,
    tracing: false,
    here: true,
    fits_musl: true,
    launcher: false,
    root_fits: false,
};

#[test]
fn a_native_dynamic_program_keeps_it_first() {
    assert_eq!(place(Some(NATIVE), PLAIN), Place::First);
    let musl = Image {
        loader: Some(Loader::Musl),
        ..NATIVE
    };
    assert_eq!(place(Some(musl), PLAIN), Place::First);
    // Not read (a script's interpreter unreadable, not ELF): as before.
    assert_eq!(place(None, PLAIN), Place::First);
}

#[test]
fn what_would_show_it_or_refuse_it_goes_without() {
    let cases = [
        (
            Image {
                loader: None,
                ..NATIVE
            },
            Why::Static,
        ),
        (
            Image {
                bits64: false,
                ..NATIVE
            },
            Why::Bits32,
        ),
        (
            Image {
                native: false,
                ..NATIVE
            },
            Why::Machine,
        ),
        (
            Image {
                sanitizer: true,
                ..NATIVE
            },
            Why::Sanitizer,
        ),
        (
            Image {
                loader: Some(Loader::Other),
                ..NATIVE
            },
            Why::Loader,
        ),
    ];
    for (image, why) in cases {
        assert_eq!(place(Some(image), PLAIN), Place::Out(why), "{image:?}");
    }
    let musl = Image {
        loader: Some(Loader::Musl),
        ..NATIVE
    };
    let unfit = Context {
        fits_musl: false,
        ..PLAIN
    };
    assert_eq!(place(Some(musl), unfit), Place::Out(Why::Musl));
    assert_eq!(place(Some(NATIVE), unfit), Place::First);
    let ldd = Context {
        tracing: true,
        ..PLAIN
    };
    assert_eq!(place(Some(NATIVE), ldd), Place::Out(Why::Tracing));
    assert_eq!(place(None, ldd), Place::Out(Why::Tracing));
    let chroot = Context {
        here: false,
        ..PLAIN
    };
    assert_eq!(place(Some(NATIVE), chroot), Place::Out(Why::Elsewhere));
}

#[test]
fn beside_the_users_sanitizer_it_comes_second() {
    let user = Context {
        user_sanitizer: true,
        ..PLAIN
    };
    assert_eq!(place(Some(NATIVE), user), Place::AfterSanitizer);
    let asan = Image {
        sanitizer: true,
        ..NATIVE
    };
    assert_eq!(place(Some(asan), user), Place::AfterSanitizer);
    assert_eq!(place(None, user), Place::AfterSanitizer);
    let i386 = Image {
        bits64: false,
        ..asan
    };
    assert_eq!(place(Some(i386), user), Place::Out(Why::Bits32));
}

fn arrange(list: &str, place: Place) -> Option<String> {
    let mut out = [0u8; 256];
    let len = arranged(list.as_bytes(), b"/o.so", place, &mut out)?;
    Some(String::from_utf8(out[..len].to_vec()).unwrap())
}

#[test]
fn the_list_is_arranged_around_the_users_entries() {
    let asan = "/usr/lib/libasan.so.8";
    let out = Place::Out(Why::Bits32);
    assert_eq!(arrange("/o.so", Place::First), None);
    assert_eq!(arrange("", Place::First).as_deref(), Some("/o.so"));
    assert_eq!(arrange("/o.so", out).as_deref(), Some(""));
    assert_eq!(arrange("/o.so /a.so", out).as_deref(), Some("/a.so"));
    assert_eq!(
        arrange("/a.so:/o.so:/b.so", out).as_deref(),
        Some("/a.so:/b.so")
    );
    assert_eq!(arrange("/a.so", out), None);
    assert_eq!(
        arrange("/a.so", Place::First).as_deref(),
        Some("/o.so /a.so")
    );
    assert_eq!(
        arrange("/a.so:/b.so", Place::First).as_deref(),
        Some("/o.so:/a.so:/b.so")
    );
    assert_eq!(
        arrange("/a.so:/o.so", Place::First).as_deref(),
        Some("/o.so:/a.so")
    );
    // A name that only starts like ours is another file.
    assert_eq!(arrange("/o.so.1", out), None);
    let after = Place::AfterSanitizer;
    assert_eq!(
        arrange(&format!("/o.so {asan}"), after),
        Some(format!("{asan} /o.so"))
    );
    assert_eq!(arrange(&format!("{asan} /o.so"), after), None);
    assert_eq!(
        arrange(&format!("{asan}:/x.so"), after),
        Some(format!("{asan}:/o.so:/x.so"))
    );
    assert_eq!(
        arrange("libasan.so.8", after).as_deref(),
        Some("libasan.so.8 /o.so")
    );
    assert_eq!(arrange("/o.so", after), None);
    // Too long for the room: left alone.
    let mut small = [0u8; 4];
    assert_eq!(arranged(b"/o.so /a.so", b"/o.so", out, &mut small), None);
    assert!(has_sanitizer(b"/o.so libasan.so.8"));
    assert!(!has_sanitizer(b"/o.so /usr/lib/libubsan.so.1"));
}

#[test]
fn loaders_are_known_by_file_name() {
    assert_eq!(Loader::named(b"/lib64/ld-linux-x86-64.so.2"), Loader::Glibc);
    assert_eq!(Loader::named(b"/lib/ld-linux.so.2"), Loader::Glibc);
    assert_eq!(Loader::named(b"/lib64/ld64.so.2"), Loader::Glibc);
    assert_eq!(Loader::named(b"/lib/ld-musl-x86_64.so.1"), Loader::Musl);
    assert_eq!(Loader::named(b"/system/bin/linker64"), Loader::Other);
}

#[test]
fn a_loader_for_another_program_keeps_it() {
    let tool = Image {
        loader: None,
        ..NATIVE
    };
    let launcher = Context {
        launcher: true,
        ..PLAIN
    };
    assert_eq!(place(Some(tool), launcher), Place::First);
    assert_eq!(place(Some(tool), PLAIN), Place::Out(Why::Static));
    let ldd = Context {
        tracing: true,
        ..launcher
    };
    assert_eq!(place(Some(tool), ldd), Place::Out(Why::Tracing));
    assert!(launches(
        b"/usr/libexec/valgrind/memcheck-amd64-linux",
        true
    ));
    assert!(launches(b"/lib64/ld-linux-x86-64.so.2", false));
    assert!(launches(b"ld-musl-x86_64.so.1", false));
    assert!(!launches(b"/sbin/docker-init", false));
}

#[test]
fn each_reason_reads_back_from_its_code() {
    for why in Why::ALL {
        assert_eq!(Why::of_code(why.code()), Some(why));
    }
    assert_eq!(Why::of_code(b'0' + Why::ALL.len() as u8), None);
    assert_eq!(Why::of_code(b'/'), None);
}

/// A static program whose root holds only loaders that take the library
/// (the runtime read it) keeps it, for what it starts; the rest of the
/// rule still holds.
#[test]
fn a_static_program_keeps_it_where_every_loader_of_its_root_fits() {
    let shell = Image {
        loader: None,
        ..NATIVE
    };
    let fits = Context {
        root_fits: true,
        ..PLAIN
    };
    assert_eq!(place(Some(shell), PLAIN), Place::Out(Why::Static));
    assert_eq!(place(Some(shell), fits), Place::First);
    let sanitizer = Context {
        user_sanitizer: true,
        ..fits
    };
    assert_eq!(place(Some(shell), sanitizer), Place::AfterSanitizer);
    let ldd = Context {
        tracing: true,
        ..fits
    };
    assert_eq!(place(Some(shell), ldd), Place::Out(Why::Tracing));
    let bits32 = Image {
        bits64: false,
        ..NATIVE
    };
    assert_eq!(place(Some(bits32), fits), Place::Out(Why::Bits32));
}
