use super::*;
use serde_json::json;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

#[test]
fn args0_is_looked_for_as_runc_looks() {
    let path = Some("/usr/local/bin:/bin/::rel");
    assert_eq!(
        candidates("sh", path, "/work"),
        ["/usr/local/bin/sh", "/bin/sh", "/work/./sh", "/work/rel/sh"]
    );
    assert_eq!(candidates("/bin/sh", path, "/w"), ["/bin/sh"]);
    assert_eq!(candidates("./x", path, "/w/"), ["/w/./x"]);
    assert_eq!(candidates("a/x", None, "/"), ["/a/x"]);
    assert_eq!(candidates("sh", None, "/"), ["/./sh"]);
    assert!(candidates("", path, "/").is_empty());
}

#[test]
fn a_script_names_its_interpreter() {
    assert_eq!(interpreter(b"#!/bin/sh\necho").as_deref(), Some("/bin/sh"));
    assert_eq!(
        interpreter(b"#! \t/usr/bin/env python3\n").as_deref(),
        Some("/usr/bin/env")
    );
    assert_eq!(interpreter(b"#!\n"), None);
    assert_eq!(interpreter(b"\x7fELF"), None);
    assert_eq!(interpreter(b"#!/bin/\xff"), None);
}

#[test]
fn the_last_entry_of_a_variable_counts() {
    let env = [
        json!("PATH=/a"),
        json!("PATHX=/x"),
        json!("PATH=/b"),
        json!(1),
    ];
    assert_eq!(variable(&env, "PATH"), Some("/b"));
    assert_eq!(variable(&env, "HOME"), None);
}

#[test]
fn the_rootfs_is_relative_to_the_bundle() {
    let bundle = Path::new("/b");
    assert_eq!(
        rootfs(bundle, &json!({"root": {"path": "rootfs"}})),
        Some(PathBuf::from("/b/rootfs"))
    );
    assert_eq!(
        rootfs(bundle, &json!({"root": {"path": "/var/x"}})),
        Some(PathBuf::from("/var/x"))
    );
    assert_eq!(rootfs(bundle, &json!({})), None);
}

/// A rootfs of this test's own: links inside it resolve inside it, a
/// link out of it does not reach the host, a FIFO is not waited for, a
/// device node not opened.
#[test]
fn the_program_is_read_inside_the_rootfs_only() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let root = std::env::temp_dir().join(format!("eatmydata-program-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("bin")).unwrap();
    let exe = std::env::current_exe().unwrap();
    std::fs::copy(&exe, root.join("bin/real")).unwrap();
    symlink("/bin/real", root.join("bin/abs")).unwrap();
    symlink("../../../../../bin/real", root.join("bin/up")).unwrap();
    // Out of the rootfs: the host's /bin/sh exists, the rootfs's not.
    symlink("/bin/sh", root.join("bin/out")).unwrap();
    std::fs::write(root.join("bin/script"), "#!/bin/abs -x\n").unwrap();
    let fifo = CString::new(root.join("bin/fifo").as_os_str().as_bytes()).unwrap();
    // SAFETY: a C string path; mkfifo reads it only.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o755) }, 0);
    for name in ["script", "fifo"] {
        let mode = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(root.join("bin").join(name), mode).unwrap();
    }
    let library = Path::new("/nonexistent.so");
    let learn_ = |arg0: &str| {
        let process = json!({"args": [arg0], "env": ["PATH=/usr/bin:/bin"], "cwd": "/"});
        learn(&root, &[], &process, library).facts
    };
    for arg0 in ["/bin/real", "abs", "/bin/up", "script"] {
        let facts = learn_(arg0).unwrap_or_else(|e| panic!("{arg0}: {e}"));
        assert_eq!(facts.kind, elf::Kind::Dynamic, "{arg0}");
    }
    let out = learn_("out").unwrap_err();
    assert!(out.contains("/bin/out"), "{out}");
    let fifo = learn_("fifo").unwrap_err();
    assert!(fifo.contains("not an executable file"), "{fifo}");
    // A device node the container made, /dev/tty's numbers: opened, it
    // would fail with ENXIO (this test has no terminal); never opened,
    // it is only not a program. A script naming it, the same.
    let tty = CString::new(root.join("bin/tty").as_os_str().as_bytes()).unwrap();
    // SAFETY: a C string path; mknod reads it only.
    let made = unsafe { libc::mknod(tty.as_ptr(), libc::S_IFCHR | 0o755, libc::makedev(5, 0)) };
    assert_eq!(made, 0, "{}", io::Error::last_os_error());
    std::fs::write(root.join("bin/ttyscript"), "#!/bin/tty\n").unwrap();
    let mode = std::fs::Permissions::from_mode(0o755);
    std::fs::set_permissions(root.join("bin/ttyscript"), mode).unwrap();
    for arg0 in ["tty", "ttyscript"] {
        let device = learn_(arg0).unwrap_err();
        assert_eq!(device, "/bin/tty is not an executable file", "{arg0}");
    }
    assert!(learn_("absent").is_err());
    std::fs::remove_dir_all(&root).unwrap();
}

/// A static init is seen through to the program it runs, found in
/// `PATH` (glibc's when there is none) from a bind as from the
/// rootfs, inits in inits; a dynamic one named so, or one that runs
/// nothing, is itself the program. The static init is the host's
/// tini-static (Debian's tini, which docker.io depends on), and gosu, a
/// static Go program, as the official database images run it.
#[test]
fn a_static_init_is_seen_through_to_its_program() {
    use std::os::unix::fs::PermissionsExt;
    let tini = Path::new("/usr/bin/tini-static");
    assert!(tini.exists(), "{} (apt-get install tini)", tini.display());
    let gosu = Path::new("/usr/sbin/gosu");
    assert!(gosu.exists(), "{} (apt-get install gosu)", gosu.display());
    let root = std::env::temp_dir().join(format!("eatmydata-init-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for folder in ["bin", "dyn", "sbin"] {
        std::fs::create_dir_all(root.join(folder)).unwrap();
    }
    let dynamic = std::env::current_exe().unwrap();
    for (from, to) in [
        (&dynamic, "bin/real"),
        (&dynamic, "dyn/tini"),
        (&tini.to_owned(), "bin/tini"),
        (&tini.to_owned(), "bin/catatonit"),
        (&gosu.to_owned(), "bin/gosu"),
    ] {
        std::fs::copy(from, root.join(to)).unwrap();
        let mode = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(root.join(to), mode).unwrap();
    }
    let binds = [("/sbin/docker-init".to_owned(), tini.to_owned())];
    let library = Path::new("/nonexistent.so");
    let learn_ = |args: &[&str], env: &[&str]| {
        let process = json!({"args": args, "env": env, "cwd": "/"});
        learn(&root, &binds, &process, library)
    };
    let path = ["PATH=/usr/bin:/bin"];
    let seen = |args: &[&str], env: &[&str]| {
        let program = learn_(args, env);
        let kind = program.facts.map(|facts| facts.kind);
        (program.path, kind, program.init)
    };
    let through = |path: &str, kind: elf::Kind, init: &str| {
        (path.to_owned(), Ok(kind), Some(init.to_owned()))
    };
    let dynamic = elf::Kind::Dynamic;
    assert_eq!(
        seen(&["/sbin/docker-init", "--", "real", "x"], &path),
        through("real", dynamic, "/sbin/docker-init"),
        "docker run --init: the init bound from the host"
    );
    assert_eq!(
        seen(&["/bin/tini", "-s", "real"], &[]),
        through("real", dynamic, "/bin/tini"),
        "options, no --, glibc's PATH"
    );
    assert_eq!(
        seen(&["tini", "--", "/bin/catatonit", "-g", "--", "real"], &path),
        through("real", dynamic, "tini"),
        "an init in an init"
    );
    assert_eq!(
        seen(&["gosu", "postgres", "real", "-D", "/data"], &path),
        through("real", dynamic, "gosu"),
        "an entry script's exec gosu USER PROGRAM"
    );
    let absent = learn_(&["tini", "--", "absent"], &path);
    assert_eq!(absent.init.as_deref(), Some("tini"));
    assert!(absent.facts.is_err(), "{absent:?}");
    for args in [&["tini", "--"][..], &["tini", "-h", "real"], &["tini"]] {
        let kind = elf::Kind::Static;
        assert_eq!(
            seen(args, &path),
            ("tini".into(), Ok(kind), None),
            "{args:?}"
        );
    }
    assert_eq!(
        seen(&["/dyn/tini", "--", "/bin/tini"], &path),
        ("/dyn/tini".into(), Ok(dynamic), None),
        "a dynamic tini has the library, whose exec wrapper judges"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// A static program's rootfs is read for its loaders: this machine's
/// glibc fits, a 32-bit loader (in the rootfs, usrmerged, or bound at
/// its place) or a sanitizer runtime does not, a dangling link runs
/// nothing; a dynamic program's rootfs is not read.
#[test]
fn a_static_programs_rootfs_is_judged_by_its_loaders() {
    use super::loaders::MAX_LOADERS;
    use std::os::unix::fs::{PermissionsExt, symlink};
    let tini = Path::new("/usr/bin/tini-static");
    assert!(tini.exists(), "{} (apt-get install tini)", tini.display());
    let root = std::env::temp_dir().join(format!("eatmydata-loaders-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for folder in ["usr/bin", "usr/lib/x86_64-linux-gnu", "lib64", "outside"] {
        std::fs::create_dir_all(root.join(folder)).unwrap();
    }
    symlink("usr/lib", root.join("lib")).unwrap();
    let native = std::env::current_exe().unwrap();
    std::fs::copy(tini, root.join("usr/bin/shell")).unwrap();
    std::fs::copy(&native, root.join("usr/bin/dynamic")).unwrap();
    for program in ["shell", "dynamic"] {
        let mode = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(root.join("usr/bin").join(program), mode).unwrap();
    }
    std::fs::copy(&native, root.join("lib64/ld-linux-x86-64.so.2")).unwrap();
    // A 32-bit file: the same bytes, ELFCLASS32.
    let mut bits32 = std::fs::read(&native).unwrap();
    bits32[4] = 1;
    std::fs::write(root.join("outside/ld-linux.so.2"), &bits32).unwrap();
    let library = Path::new("/nonexistent.so");
    let learn_ = |args: &[&str], binds: &[(String, PathBuf)]| {
        let process = json!({"args": args, "env": ["PATH=/usr/bin"], "cwd": "/"});
        learn(&root, binds, &process, library).root_fits
    };
    assert_eq!(learn_(&["shell"], &[]), Ok(()));
    let dynamic = learn_(&["dynamic"], &[]).unwrap_err();
    assert!(dynamic.contains("not static"), "{dynamic}");
    // A link to nothing: no program can run under it.
    symlink("/nowhere/ld-linux.so.2", root.join("usr/lib/ld-linux.so.2")).unwrap();
    assert_eq!(learn_(&["shell"], &[]), Ok(()));
    // Bound at the 32-bit loader's place, from outside the rootfs.
    let bound = [(
        "/lib/ld-linux.so.2".to_owned(),
        root.join("outside/ld-linux.so.2"),
    )];
    let why = learn_(&["shell"], &bound).unwrap_err();
    assert_eq!(
        why,
        "the rootfs holds /lib/ld-linux.so.2, a loader of another class or architecture"
    );
    // In the rootfs, through usrmerge's /lib link.
    std::fs::remove_file(root.join("usr/lib/ld-linux.so.2")).unwrap();
    symlink("/outside/ld-linux.so.2", root.join("usr/lib/ld-linux.so.2")).unwrap();
    let why = learn_(&["shell"], &[]).unwrap_err();
    assert!(why.contains("/lib/ld-linux.so.2"), "{why}");
    std::fs::remove_file(root.join("usr/lib/ld-linux.so.2")).unwrap();
    // A root of its own bound in (a chroot's tree), whatever its loader;
    // a bind with no loader in it is only a folder.
    let tree = root.join("outside/tree");
    std::fs::create_dir_all(tree.join("lib64")).unwrap();
    let folder = [("/target".to_owned(), tree.clone())];
    assert_eq!(learn_(&["shell"], &folder), Ok(()));
    std::fs::copy(&native, tree.join("lib64/ld-linux-x86-64.so.2")).unwrap();
    let why = learn_(&["shell"], &folder).unwrap_err();
    assert!(
        why.starts_with("the bind at /target holds a root of its own (/target/lib64/ld-linux"),
        "{why}"
    );
    // Another architecture's loader (arm64's, run by qemu-user), or
    // x86_64's where this machine is arm64.
    let mut foreign = std::fs::read(&native).unwrap();
    foreign[18] = if foreign[18] == 183 { 62 } else { 183 };
    let aarch64 = root.join("usr/lib/ld-linux-aarch64.so.1");
    std::fs::write(&aarch64, &foreign).unwrap();
    let why = learn_(&["shell"], &[]).unwrap_err();
    assert!(
        why.contains("/lib/ld-linux-aarch64.so.1, a loader of another"),
        "{why}"
    );
    std::fs::remove_file(&aarch64).unwrap();
    // musl's loader: where the library fits musl, and where it names
    // glibc's loader (an old build, Debian's libeatmydata).
    std::fs::copy(&native, root.join("usr/lib/ld-musl-x86_64.so.1")).unwrap();
    assert_eq!(learn_(&["shell"], &[]), Ok(()));
    let glibc_only = root.join("outside/glibc-only.so");
    std::fs::write(&glibc_only, b"\x7fELF\0ld-linux-x86-64.so.2\0").unwrap();
    let process = json!({"args": ["shell"], "env": ["PATH=/usr/bin"], "cwd": "/"});
    let why = learn(&root, &[], &process, &glibc_only)
        .root_fits
        .unwrap_err();
    assert!(
        why.contains("musl's loader, which cannot relocate"),
        "{why}"
    );
    std::fs::remove_file(root.join("usr/lib/ld-musl-x86_64.so.1")).unwrap();
    // So many loaders: not judged.
    for n in 0..=MAX_LOADERS {
        symlink("/nowhere", root.join(format!("lib64/ld-{n}.so"))).unwrap();
    }
    let why = learn_(&["shell"], &[]).unwrap_err();
    assert!(why.contains("more than 64 loaders"), "{why}");
    for n in 0..=MAX_LOADERS {
        std::fs::remove_file(root.join(format!("lib64/ld-{n}.so"))).unwrap();
    }
    // A sanitizer runtime where the loader looks.
    let asan = root.join(format!(
        "usr/lib/{}-linux-gnu/libasan.so.8",
        std::env::consts::ARCH
    ));
    std::fs::create_dir_all(asan.parent().unwrap()).unwrap();
    std::fs::write(&asan, b"").unwrap();
    let why = learn_(&["shell"], &[]).unwrap_err();
    assert!(why.contains("libasan.so.8, a sanitizer runtime"), "{why}");
    std::fs::remove_dir_all(&root).unwrap();
}
