//! What the edit leaves out, and where, checked on bundles run by runc
//! beside the same bundle run by runc alone (`runtime/edit/`): programs
//! that cannot take the library (i386, AddressSanitizer, static) get the
//! seccomp rules alone, with runc's output; specs that give the library no
//! place (a `/dev` of the host's, a user namespace over a root-owned
//! rootfs, an `/opt` that is a file or mounted read-only) start as under
//! runc, nothing made in the rootfs; hooks see the environment runc alone
//! gives them.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use super::{Bundle, Container, MOUNTED, Via, inside, new_id, text};
use crate::common::{Flushes, Libc, TempDir, nosync_into, probe, probe_for};
use crate::loopfs::LoopFs;

/// Copies `program` into the bundle's `/bin`, and the glibc objects it
/// needs (as `ldd` names them) to their own paths in the rootfs.
fn with_glibc(bundle: &Bundle, program: &Path) {
    let rootfs = bundle.dir.join("rootfs");
    let ldd = Command::new("ldd").arg(program).output().expect("run ldd");
    let ldd = String::from_utf8_lossy(&ldd.stdout);
    for object in ldd.split_whitespace().filter(|w| w.starts_with('/')) {
        let inside = rootfs.join(object.trim_start_matches('/'));
        fs::create_dir_all(inside.parent().unwrap()).unwrap();
        fs::copy(fs::canonicalize(object).unwrap(), inside).unwrap();
    }
    fs::copy(
        program,
        rootfs.join("bin").join(program.file_name().unwrap()),
    )
    .unwrap();
}

/// `run --bundle` through `via` with the shims' `--log`: the output, and
/// the messages of the log's lines.
fn run_logged(
    bundle: &Bundle,
    via: Via,
    args: &[&str],
    change: impl FnOnce(&mut Value),
) -> (Output, String) {
    bundle.write_spec(args, change);
    let (id, log) = (new_id(), bundle.dir.join(format!("log-{}.json", new_id())));
    let output = bundle
        .command(via, Some(&log))
        .args(["run", "--bundle"])
        .arg(bundle.dir.path())
        .arg(&id)
        .stdin(Stdio::null())
        .output()
        .expect("run the runtime");
    Container::gone(bundle, via, &id);
    let logged = fs::read_to_string(&log).unwrap_or_default();
    let messages = logged
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|line| line["msg"].as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n");
    (output, messages)
}

/// The spec's `LD_PRELOAD` entries after our edit.
fn preloads(bundle: &Bundle) -> Vec<String> {
    let spec: Value = serde_json::from_slice(&fs::read(bundle.config()).unwrap()).unwrap();
    let env = spec["process"]["env"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    env.iter()
        .filter_map(Value::as_str)
        .filter(|e| e.starts_with("LD_PRELOAD="))
        .map(str::to_owned)
        .collect()
}

/// `fsync_loop FILE 100` run alone, alone under `nosync` (the floor) and
/// through the runtime: same status, output and error output; the flushes
/// judged by `common::flushes`. Returns our log's messages.
fn compare_fsyncs(bundle: &Bundle, disk: &LoopFs, program: &str) -> String {
    let mut control = None;
    let control_flushes = disk.flushes_during(|| {
        control = Some(bundle.run(Via::Alone("runc"), &[program, "/data/a", "100"], |_| {}));
    });
    let control = control.unwrap();
    assert!(control.status.success(), "control: {}", text(&control));
    nosync_into(disk.path());
    let floor = disk.flushes_during(|| {
        let args = ["/data/nosync", program, "/data/f", "100"];
        let floor = bundle.run(Via::Alone("runc"), &args, |_| {});
        assert!(floor.status.success(), "floor: {}", text(&floor));
    });
    let mut ours = None;
    let our_flushes = disk.flushes_during(|| {
        ours = Some(run_logged(
            bundle,
            Via::Ours("runc"),
            &[program, "/data/b", "100"],
            |_| {},
        ));
    });
    let (ours, log) = ours.unwrap();
    assert_eq!(
        (ours.status, &ours.stdout, &ours.stderr),
        (control.status, &control.stdout, &control.stderr),
        "{}",
        text(&ours)
    );
    Flushes {
        control: control_flushes,
        floor,
        eaten: our_flushes,
    }
    .assert_eaten(100, program);
    log
}

/// An i386 program: its loader would print `ERROR: ld.so: object ...
/// wrong ELF class` for our 64-bit library; the seccomp rules eat its
/// fsyncs alone. Failed before the edit read the program: that line in
/// every run's stderr.
#[test]
fn an_i386_program_gets_the_rules_alone_and_no_loader_line() {
    let program = probe("fsync_loop", &["-m32"]);
    let disk = LoopFs::new("runtime-i386", 64);
    let bundle = Bundle::new("runtime-i386", &[], &disk);
    with_glibc(&bundle, &program);
    let log = compare_fsyncs(&bundle, &disk, &inside(&program));
    assert!(preloads(&bundle).is_empty(), "{:?}", preloads(&bundle));
    assert!(
        log.contains(&format!(
            "library mounted at {MOUNTED}, no LD_PRELOAD ({} is a 32-bit program",
            inside(&program)
        )),
        "{log}"
    );
}

/// A program built with `-fsanitize=address` exits 1 with anything
/// preloaded ("ASan runtime does not come first in initial library
/// list"): it gets the rules alone. Failed before: exit 1.
#[test]
fn an_asan_program_runs_as_under_runc() {
    let program = probe("fsync_loop", &["-fsanitize=address"]);
    let disk = LoopFs::new("runtime-asan", 64);
    let bundle = Bundle::new("runtime-asan", &[], &disk);
    with_glibc(&bundle, &program);
    let log = compare_fsyncs(&bundle, &disk, &inside(&program));
    assert!(preloads(&bundle).is_empty());
    assert!(log.contains("is linked with a sanitizer runtime"), "{log}");
}

/// A static program reads no `LD_PRELOAD`, and what it starts inherits
/// it without the library's check at exec: where the rootfs holds a
/// loader that cannot take the library (i386's here, whose programs would
/// print the loader's error), it goes without, and the rules eat the
/// fsyncs of the program and of all it starts.
#[test]
fn a_static_program_beside_an_i386_loader_goes_without_the_preload() {
    let program = probe("fsync_loop", &["-static"]);
    let disk = LoopFs::new("runtime-static-preload", 64);
    let bundle = Bundle::new("runtime-static-preload", &[&program], &disk);
    let lib = bundle.dir.join("rootfs/lib");
    fs::create_dir_all(&lib).unwrap();
    fs::copy(
        fs::canonicalize("/lib/ld-linux.so.2").expect("i386's loader (libc6-i386)"),
        lib.join("ld-linux.so.2"),
    )
    .unwrap();
    let log = compare_fsyncs(&bundle, &disk, &inside(&program));
    assert!(preloads(&bundle).is_empty(), "{log}");
    assert!(
        log.contains("is a static program")
            && log.contains("and the rootfs holds /lib/ld-linux.so.2, a loader of another class"),
        "{log}"
    );
}

/// The same static program in a rootfs whose every loader takes the
/// library (it holds none) keeps `LD_PRELOAD`, for what it starts
/// (`runtime/edit/program/loaders.rs`); its own fsyncs are still the
/// rules'.
#[test]
fn a_static_program_keeps_the_preload_where_every_loader_fits() {
    let program = probe("fsync_loop", &["-static"]);
    let disk = LoopFs::new("runtime-static-fits", 64);
    let bundle = Bundle::new("runtime-static-fits", &[&program], &disk);
    let log = compare_fsyncs(&bundle, &disk, &inside(&program));
    assert_eq!(
        preloads(&bundle),
        [format!("LD_PRELOAD={MOUNTED}")],
        "{log}"
    );
    assert!(log.contains("LD_PRELOAD set"), "{log}");
}

/// podman mounts `/dev` `noexec`: the library's bind is a mount of its
/// own, mapped executable all the same. The oracle is what only the
/// library does: `open_flags`'s sync flags dropped before the kernel.
#[test]
fn the_library_loads_under_a_noexec_dev() {
    let program = probe_for(Libc::Musl, "open_flags", &[]);
    let disk = LoopFs::new("runtime-noexec-dev", 16);
    let bundle = Bundle::new("runtime-noexec-dev", &[&program], &disk);
    let noexec = |spec: &mut Value| {
        let mounts = spec["mounts"].as_array_mut().unwrap();
        let dev = mounts
            .iter_mut()
            .find(|m| m["destination"] == "/dev")
            .unwrap();
        dev["options"] = json!(["nosuid", "noexec", "strictatime", "mode=755", "size=65536k"]);
    };
    fs::create_dir_all(disk.join("a")).unwrap();
    fs::create_dir_all(disk.join("b")).unwrap();
    let control = bundle.run(Via::Alone("runc"), &[&inside(&program), "/data/a"], noexec);
    let (ours, log) = run_logged(
        &bundle,
        Via::Ours("runc"),
        &[&inside(&program), "/data/b"],
        noexec,
    );
    assert!(control.status.success(), "{}", text(&control));
    assert!(
        ours.status.success() && ours.stderr.is_empty(),
        "{}",
        text(&ours)
    );
    let (control, ours) = (
        String::from_utf8(control.stdout).unwrap(),
        String::from_utf8(ours.stdout).unwrap(),
    );
    assert!(control.contains("sync=1 dsync=1"), "{control}");
    assert_eq!(control.lines().count(), ours.lines().count(), "{ours}");
    assert!(ours.lines().all(|l| l.contains("sync=0 dsync=0")), "{ours}");
    assert!(
        log.contains(&format!("library mounted at {MOUNTED}, LD_PRELOAD set")),
        "{log}"
    );
}

/// A spec whose `/dev` is a bind of the host's: the mount point would be
/// made on the host. No library, the container starts, the log says so,
/// and the host's `/dev` gains nothing.
#[test]
fn a_dev_of_the_hosts_gets_no_library() {
    let program = probe_for(Libc::Musl, "sync_calls", &[]);
    let disk = LoopFs::new("runtime-host-dev", 64);
    let bundle = Bundle::new("runtime-host-dev", &[&program], &disk);
    let host_dev = |spec: &mut Value| {
        let mounts = spec["mounts"].as_array_mut().unwrap();
        mounts.retain(|m| !m["destination"].as_str().unwrap().starts_with("/dev"));
        mounts.push(
            json!({"destination": "/dev", "type": "bind", "source": "/dev",
                           "options": ["rbind", "nosuid"]}),
        );
    };
    let control = bundle.run(
        Via::Alone("runc"),
        &[&inside(&program), "/data/a"],
        host_dev,
    );
    let (ours, log) = run_logged(
        &bundle,
        Via::Ours("runc"),
        &[&inside(&program), "/data/b"],
        host_dev,
    );
    assert!(control.status.success(), "{}", text(&control));
    assert_eq!(
        (ours.status, &ours.stdout, &ours.stderr),
        (control.status, &control.stdout, &control.stderr),
        "{}",
        text(&ours)
    );
    assert!(
        log.contains("no library (the spec's /dev is not a tmpfs of its own): no LD_PRELOAD"),
        "{log}"
    );
    assert!(!Path::new("/dev/.eatmydata").exists());
    assert!(preloads(&bundle).is_empty());
}

/// The rootfs listed, path and type of each entry.
fn listing(root: &Path) -> String {
    let find = Command::new("find")
        .arg(root)
        .args(["-printf", "%p %y\n"])
        .output();
    let mut lines: Vec<String> = String::from_utf8_lossy(&find.unwrap().stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines.join("\n")
}

/// The failures of the `/opt` place: an image whose `/opt` is a file, and
/// a read-only mount at `/opt`. Both start as under runc, and the rootfs
/// holds exactly what runc alone left in it. Failed before: exit 1, "not
/// a directory" and "read-only file system".
#[test]
fn an_opt_that_is_a_file_or_read_only_is_left_alone() {
    let program = probe_for(Libc::Musl, "sync_calls", &[]);
    let disk = LoopFs::new("runtime-opt", 64);
    let volume = TempDir::new("runtime-opt-volume");
    let read_only = |spec: &mut Value| {
        let mounts = spec["mounts"].as_array_mut().unwrap();
        mounts.push(
            json!({"destination": "/opt", "type": "bind", "source": volume.path(),
                           "options": ["rbind", "ro"]}),
        );
    };
    for (case, file) in [("a file", true), ("read-only", false)] {
        let bundle = Bundle::new("runtime-opt", &[&program], &disk);
        let rootfs = bundle.dir.join("rootfs");
        if file {
            fs::write(rootfs.join("opt"), "a file\n").unwrap();
        } else {
            fs::create_dir(rootfs.join("opt")).unwrap();
        }
        let change = |spec: &mut Value| {
            if !file {
                read_only(spec);
            }
        };
        let control = bundle.run(Via::Alone("runc"), &[&inside(&program), "/data/a"], change);
        assert!(control.status.success(), "{case}: {}", text(&control));
        let before = listing(&rootfs);
        let (ours, _) = run_logged(
            &bundle,
            Via::Ours("runc"),
            &[&inside(&program), "/data/b"],
            change,
        );
        assert_eq!(
            (ours.status, &ours.stdout, &ours.stderr),
            (control.status, &control.stdout, &control.stderr),
            "{case}: {}",
            text(&ours)
        );
        assert_eq!(listing(&rootfs), before, "{case}: the rootfs changed");
        assert_eq!(fs::read_dir(volume.path()).unwrap().count(), 0, "{case}");
    }
}

/// A user namespace whose root is host uid 100000, over a rootfs owned
/// by the host's root (mode 0755): runc alone starts it, and so must we.
/// Failed before: "mkdir .../rootfs/opt: permission denied".
#[test]
fn a_user_namespace_over_a_root_owned_rootfs_starts() {
    let program = probe_for(Libc::Musl, "sync_calls", &[]);
    let disk = LoopFs::new("runtime-userns", 16);
    let bundle = Bundle::new("runtime-userns", &[&program], &disk);
    // An image has its mount points; the container's root may not make any.
    for dir in ["proc", "dev", "sys"] {
        fs::create_dir_all(bundle.dir.join("rootfs").join(dir)).unwrap();
    }
    let userns = |spec: &mut Value| {
        let linux = &mut spec["linux"];
        linux["namespaces"]
            .as_array_mut()
            .unwrap()
            .push(json!({"type": "user"}));
        let map = json!([{"containerID": 0, "hostID": 100000, "size": 65536}]);
        linux["uidMappings"] = map.clone();
        linux["gidMappings"] = map;
        // Nothing of the host's that uid 100000 may not reach.
        let mounts = spec["mounts"].as_array_mut().unwrap();
        mounts.retain(|m| m["destination"] != "/data" && m["destination"] != "/sys/fs/cgroup");
    };
    // The file goes to the container's own /dev tmpfs.
    let args = [inside(&program), "/dev/a".to_owned()];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let control = bundle.run(Via::Alone("runc"), &args, userns);
    assert!(control.status.success(), "control: {}", text(&control));
    let (ours, log) = run_logged(&bundle, Via::Ours("runc"), &args, userns);
    assert_eq!(
        (ours.status, &ours.stdout, &ours.stderr),
        (control.status, &control.stdout, &control.stderr),
        "{}",
        text(&ours)
    );
    assert!(log.contains("LD_PRELOAD set"), "{log}");
}

/// What a `createContainer` hook without `env` of its own saw (`env |
/// sort`) when `program` ran in `bundle` through `via`, the spec changed
/// by `change` too; `name` tells the runs apart.
fn hook_saw(
    bundle: &Bundle,
    program: &Path,
    (via, name): (Via, &str),
    change: impl FnOnce(&mut Value),
) -> String {
    let out = bundle.dir.join(name);
    let dump = format!("env | sort > {}", out.display());
    let hook = json!([{"path": "/bin/sh", "args": ["sh", "-c", dump]}]);
    let output = bundle.run(via, &[&inside(program), &format!("/data/{name}")], |spec| {
        spec["hooks"] = json!({ "createContainer": hook });
        change(spec);
    });
    assert!(output.status.success(), "{}", text(&output));
    fs::read_to_string(out).unwrap()
}

/// runc runs a `createContainer` hook that has no `env` with the
/// container's `process.env`: the hook must not see our `LD_PRELOAD`.
/// Failed before: the hook's environment had it.
#[test]
fn hooks_without_env_see_the_original_environment() {
    let program = probe_for(Libc::Musl, "sync_calls", &[]);
    let disk = LoopFs::new("runtime-hooks", 16);
    let bundle = Bundle::new("runtime-hooks", &[&program], &disk);
    let control = hook_saw(&bundle, &program, (Via::Alone("runc"), "control"), |_| {});
    let ours = hook_saw(&bundle, &program, (Via::Ours("runc"), "ours"), |_| {});
    assert!(control.contains("PATH="), "{control}");
    assert_eq!(ours, control);
    assert!(!preloads(&bundle).is_empty(), "the container itself has it");
}

/// A static program's container gets `LD_PRELOAD` (its rootfs holds no
/// loader that cannot take the library) and the account's
/// `EATMYDATA_REPORT`: a hook that inherits `process.env` sees neither,
/// as under runc alone. Security review 3 (issue 45): a
/// static program's hooks inherited `EATMYDATA_REPORT`.
#[test]
fn hooks_of_a_static_program_see_the_original_environment() {
    let program = probe("sync_calls", &["-static"]);
    let disk = LoopFs::new("runtime-hooks-static", 16);
    let bundle = Bundle::new("runtime-hooks-static", &[&program], &disk);
    let control = hook_saw(&bundle, &program, (Via::Alone("runc"), "control"), |_| {});
    let ours = hook_saw(&bundle, &program, (Via::Ours("runc"), "ours"), |_| {});
    assert!(control.contains("PATH="), "{control}");
    assert!(!ours.contains("EATMYDATA_"), "{ours}");
    assert_eq!(ours, control);
}

/// The same with a spec whose `process.env` is empty (or absent): runc
/// gives such hooks no `LD_PRELOAD`, so they must not get ours either.
/// Failed before: with nothing to copy, the hooks inherited the edited
/// `process.env`, our `LD_PRELOAD` in it.
#[test]
fn hooks_of_a_spec_without_env_see_what_runc_gives_them() {
    let program = probe_for(Libc::Musl, "sync_calls", &[]);
    let disk = LoopFs::new("runtime-hooks-empty", 16);
    let bundle = Bundle::new("runtime-hooks-empty", &[&program], &disk);
    // Empty, and absent.
    for env in [json!([]), Value::Null] {
        let set = |spec: &mut Value| {
            let process = spec["process"].as_object_mut().unwrap();
            match &env {
                Value::Null => process.remove("env"),
                env => process.insert("env".into(), env.clone()),
            };
        };
        let control = hook_saw(&bundle, &program, (Via::Alone("runc"), "control"), set);
        let ours = hook_saw(&bundle, &program, (Via::Ours("runc"), "ours"), set);
        assert!(!ours.contains("LD_PRELOAD"), "{ours}");
        assert_eq!(ours, control, "env {env}");
    }
}

/// `exec` of an i386 program in a container that has the library: no
/// `LD_PRELOAD` for it, so no loader line; same output as runc's exec.
#[test]
fn exec_of_an_i386_program_gets_no_preload() {
    let hold = probe("hold", &["-static"]);
    let program = probe("fsync_loop", &["-m32"]);
    let disk = LoopFs::new("runtime-exec-i386", 16);
    let bundle = Bundle::new("runtime-exec-i386", &[&hold], &disk);
    with_glibc(&bundle, &program);
    let container = Container::start(&bundle, Via::Ours("runc"), &inside(&hold));
    let mut process = bundle.base["process"].clone();
    let mut exec = |via: Via, file: &str| {
        process["args"] = json!([inside(&program), file, "3"]);
        container.exec(via, &process)
    };
    let control = exec(Via::Alone("runc"), "/data/a");
    let ours = exec(Via::Ours("runc"), "/data/b");
    assert!(control.status.success(), "{}", text(&control));
    assert_eq!(
        (ours.status, &ours.stdout, &ours.stderr),
        (control.status, &control.stdout, &control.stderr),
        "{}",
        text(&ours)
    );
}
