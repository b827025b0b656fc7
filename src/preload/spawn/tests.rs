use super::*;

fn route(why: Why, tell: bool) -> Route {
    Route {
        loader: c"/lib/ld.so".as_ptr(),
        library: c"/run/libeatmydata.so".as_ptr(),
        program: c"/bin/prog".as_ptr(),
        code: [why.code(), if tell { b'v' } else { b'-' }, 0, 0],
        path: [0; PATH_ROOM],
    }
}

fn terminated(list: &[&CStr]) -> Vec<*const c_char> {
    let mut array: Vec<_> = list.iter().map(|entry| entry.as_ptr()).collect();
    array.push(core::ptr::null());
    array
}

/// The strings of a NULL-terminated array.
fn strings(array: *const *const c_char) -> Vec<Vec<u8>> {
    // SAFETY: a NULL-terminated array of C strings.
    let array = unsafe { entries(array) };
    array
        .iter()
        // SAFETY: each entry is a C string.
        .map(|&entry| unsafe { CStr::from_ptr(entry) }.to_bytes().to_vec())
        .collect()
}

/// What the trampoline sees of the arguments the hook lays out for
/// `argv`: the loader's first one gone, as the loader removes it.
fn laid_out(argv: &[&CStr], why: Why, tell: bool) -> Vec<Vec<u8>> {
    let route = route(why, tell);
    let argv = terminated(argv);
    // SAFETY: a NULL-terminated array of C strings.
    let size = unsafe { eatmydata_spawn_slots(argv.as_ptr()) };
    let mut slots = vec![c"unwritten".as_ptr(); size];
    // SAFETY: as counted, from a filled route.
    unsafe { eatmydata_spawn_args(&route, argv.as_ptr(), slots.as_mut_ptr(), size) };
    assert!(slots.last().unwrap().is_null());
    let mut laid = strings(slots.as_ptr());
    assert_eq!(laid.len(), size - 1);
    assert_eq!(laid.remove(0), b"/lib/ld.so");
    laid
}

/// The trampoline's environment for `envp`, as the hook maps it.
fn hidden(envp: &[&CStr]) -> Vec<Vec<u8>> {
    let envp = terminated(envp);
    let mut env = Env {
        entries: core::ptr::null_mut(),
        size: 0,
    };
    // SAFETY: a NULL-terminated array of C strings; `env` writable.
    assert_eq!(unsafe { eatmydata_spawn_env(envp.as_ptr(), &mut env) }, 0);
    let seen = strings(env.entries);
    // SAFETY: mapped just above, not used after.
    unsafe { eatmydata_spawn_unmap(&env) };
    seen
}

fn parsed(args: &[Vec<u8>]) -> Option<Parsed> {
    parse(args.len(), |n| args.get(n).map(Vec::as_slice))
}

#[test]
fn the_trampoline_reads_what_the_hook_lays_out() {
    let argv = [c"prog", c"", c"--eatmydata-spawned", c"last"];
    let args = laid_out(&argv, Why::Static, true);
    let parsed = parsed(&args).expect("the layout reads back");
    assert_eq!(
        parsed,
        Parsed {
            why: Why::Static,
            tell: true,
        }
    );
    assert_eq!(args[0], b"/run/libeatmydata.so");
    assert_eq!(args[BEFORE - 1], b"/bin/prog");
    let given: Vec<&[u8]> = argv.iter().map(|arg| arg.to_bytes()).collect();
    assert_eq!(args[BEFORE..], given);
}

/// The environment is never among the arguments, which every local user
/// reads (`/proc/PID/cmdline`): it is the trampoline's own environment,
/// each entry behind a byte no loader's variable starts with, so that
/// the loader acts on none of them.
#[test]
fn the_environment_goes_hidden_in_the_trampoline_s_own() {
    let envp = [
        c"PATH=/bin",
        c"LD_PRELOAD=/x.so",
        c"GLIBC_TUNABLES=glibc.malloc.check=3",
        c"",
        c"=odd",
    ];
    let args = laid_out(&[c"prog"], Why::Static, false);
    for entry in &envp {
        let entry = entry.to_bytes();
        let shown = !entry.is_empty()
            && args
                .iter()
                .any(|arg| arg.windows(entry.len()).any(|w| w == entry));
        assert!(!shown, "{entry:?} in {args:?}");
    }
    let env = hidden(&envp);
    assert_eq!(env.len(), envp.len());
    for (seen, given) in env.iter().zip(envp) {
        assert_eq!(seen[0], HIDDEN);
        assert_eq!(unhidden(seen), Some(given.to_bytes()));
    }
    for loaders in [b"LD_" as &[u8], b"GLIBC_TUNABLES", b"MALLOC_"] {
        assert!(env.iter().all(|entry| !entry.starts_with(loaders)));
    }
    assert_eq!(hidden(&[]), Vec::<Vec<u8>>::new());
    assert_eq!(unhidden(b"PATH=/bin"), None);
}

#[test]
fn no_arguments_read_back_too() {
    let args = laid_out(&[], Why::Bits32, false);
    assert_eq!(args.len(), BEFORE);
    let parsed = parsed(&args).unwrap();
    assert_eq!((parsed.why, parsed.tell), (Why::Bits32, false));
}

#[test]
fn anything_else_is_refused() {
    let good = laid_out(&[c"prog"], Why::Static, false);
    assert!(parsed(&good).is_some());
    let refused = |change: &dyn Fn(&mut Vec<Vec<u8>>)| {
        let mut args = good.clone();
        change(&mut args);
        parsed(&args)
    };
    assert_eq!(refused(&|args| args[1] = b"--other".to_vec()), None);
    assert_eq!(refused(&|args| args[2] = b"9-".to_vec()), None);
    assert_eq!(refused(&|args| args[2] = b"0".to_vec()), None);
    assert_eq!(refused(&|args| args.truncate(BEFORE - 1)), None);
    assert_eq!(parsed(&[b"/lib".to_vec()]), None);
}

#[test]
fn hide_writes_only_what_fits() {
    let mut slots = [c"unwritten".as_ptr(); 3];
    let mut strings = [0xffu8; 8];
    hide(
        [b"A=1" as &[u8], b"B=22"].into_iter(),
        &mut slots,
        &mut strings,
    );
    assert_eq!(&strings[..5], b"~A=1\0");
    assert!(slots[1].is_null(), "B=22 does not fit");
}
