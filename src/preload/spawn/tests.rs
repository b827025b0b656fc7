use super::*;

/// What the trampoline sees of the arguments the hook lays out for
/// `argv` and `envp`: the loader's first one gone, as the loader removes
/// it.
fn laid_out(argv: &[&CStr], envp: &[&CStr], why: Why, tell: bool) -> Vec<Vec<u8>> {
    let mut route = Route {
        loader: c"/lib/ld.so".as_ptr(),
        library: c"/run/libeatmydata.so".as_ptr(),
        program: c"/bin/prog".as_ptr(),
        code: [why.code(), if tell { b'v' } else { b'-' }, 0, 0],
        count: [b'x'; 24],
        path: [0; PATH_ROOM],
    };
    let terminated = |list: &[&CStr]| -> Vec<*const c_char> {
        let mut array: Vec<_> = list.iter().map(|entry| entry.as_ptr()).collect();
        array.push(core::ptr::null());
        array
    };
    let (argv, envp) = (terminated(argv), terminated(envp));
    // SAFETY: NULL-terminated arrays of C strings.
    let size = unsafe { eatmydata_spawn_slots(argv.as_ptr(), envp.as_ptr()) };
    let mut slots = vec![c"unwritten".as_ptr(); size];
    // SAFETY: as counted, from a filled route.
    unsafe {
        eatmydata_spawn_args(
            &mut route,
            argv.as_ptr(),
            envp.as_ptr(),
            slots.as_mut_ptr(),
            size,
        )
    };
    assert!(slots.last().unwrap().is_null());
    let loader = slots.first().unwrap();
    // SAFETY: a C string the route names.
    assert_eq!(unsafe { CStr::from_ptr(*loader) }, c"/lib/ld.so");
    slots[1..size - 1]
        .iter()
        // SAFETY: each laid entry is a C string.
        .map(|&entry| unsafe { CStr::from_ptr(entry) }.to_bytes().to_vec())
        .collect()
}

fn parsed(args: &[Vec<u8>]) -> Option<Parsed> {
    parse(args.len(), |n| args.get(n).map(Vec::as_slice))
}

#[test]
fn the_trampoline_reads_what_the_hook_lays_out() {
    let argv = [c"prog", c"", c"--eatmydata-spawned", c"last"];
    let envp = [c"PATH=/bin", c"EATMYDATA_CHILD_FILTER=verbose"];
    let args = laid_out(&argv, &envp, Why::Static, true);
    let parsed = parsed(&args).expect("the layout reads back");
    assert_eq!(
        parsed,
        Parsed {
            why: Why::Static,
            tell: true,
            count: 4
        }
    );
    assert_eq!(args[0], b"/run/libeatmydata.so");
    assert_eq!(args[3], b"/bin/prog");
    let given: Vec<&[u8]> = argv.iter().map(|arg| arg.to_bytes()).collect();
    assert_eq!(args[BEFORE..BEFORE + 4], given);
    let env: Vec<&[u8]> = envp.iter().map(|entry| entry.to_bytes()).collect();
    assert_eq!(args[BEFORE + 5..], env);
}

#[test]
fn no_arguments_and_no_environment_read_back_too() {
    let args = laid_out(&[], &[], Why::Bits32, false);
    assert_eq!(args.len(), BEFORE + 1);
    let parsed = parsed(&args).unwrap();
    assert_eq!(
        (parsed.why, parsed.tell, parsed.count),
        (Why::Bits32, false, 0)
    );
}

#[test]
fn anything_else_is_refused() {
    let good = laid_out(&[c"prog"], &[c"A=1"], Why::Static, false);
    assert!(parsed(&good).is_some());
    let refused = |change: &dyn Fn(&mut Vec<Vec<u8>>)| {
        let mut args = good.clone();
        change(&mut args);
        parsed(&args)
    };
    assert_eq!(refused(&|args| args[1] = b"--other".to_vec()), None);
    assert_eq!(refused(&|args| args[2] = b"9-".to_vec()), None);
    assert_eq!(refused(&|args| args[2] = b"0".to_vec()), None);
    assert_eq!(refused(&|args| args[4] = b"2".to_vec()), None);
    assert_eq!(refused(&|args| args[4] = b"".to_vec()), None);
    assert_eq!(refused(&|args| args[4] = b"1x".to_vec()), None);
    assert_eq!(
        refused(&|args| args[4] = b"99999999999999999999".to_vec()),
        None
    );
    assert_eq!(refused(&|args| args.truncate(BEFORE + 1)), None);
    assert_eq!(parsed(&[b"/lib".to_vec()]), None);
}

#[test]
fn counts_are_written_in_decimal() {
    let mut room = [b'x'; 24];
    for n in [0, 7, 10, 12345, usize::MAX] {
        let at = decimal(n, &mut room);
        // SAFETY: NUL-terminated in `room`.
        let text = unsafe { CStr::from_ptr(at) }.to_str().unwrap();
        assert_eq!(text, n.to_string());
    }
}
