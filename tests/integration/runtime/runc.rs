//! Programs in a container whose `create` went through the runtime: what
//! reached the loop device, beside the same container run by the real
//! runtime alone, and the same output and status.

use serde_json::{Value, json};

use super::{Bundle, Container, MOUNTED, Via, inside, text, without_barrier};
use crate::common::{Flushes, Libc, nosync_into, probe, probe_for};
use crate::loopfs::LoopFs;

/// The `config.json` dockerd wrote here, with Docker's default profile.
const DOCKER: &str = include_str!("../../../src/wrapper/runtime/edit/docker-config.json");

/// How many containers each count runs: `sync_calls` makes six sync
/// calls, too few flushes alone for the judge to tell.
const ROUNDS: usize = 4;

/// Runs `sync_calls` in `bundle` [`ROUNDS`] times each: alone, alone under
/// `nosync` (the floor) and through the runtime, each with `change` made to
/// the spec; judges the flushes (`common::flushes`) and asserts the same
/// output and status.
fn compare(
    bundle: &Bundle,
    disk: &LoopFs,
    program: &str,
    real: &'static str,
    change: impl Fn(&mut Value),
) {
    let runs = |via: Via, prefix: &[&str], name: &str| {
        let mut last = None;
        for round in 0..ROUNDS {
            let file = format!("/data/{name}{round}");
            let args = [prefix, &[program, &file]].concat();
            let output = bundle.run(via, &args, &change);
            assert!(output.status.success(), "{name}: {}", text(&output));
            last = Some(output);
        }
        last.unwrap()
    };
    let mut control = None;
    let control_flushes =
        disk.flushes_during_sync(|| control = Some(runs(Via::Alone(real), &[], "a")));
    let control = control.unwrap();
    nosync_into(disk.path());
    let floor = disk.flushes_during(|| drop(runs(Via::Alone(real), &["/data/nosync"], "f")));
    let mut ours = None;
    let our_flushes = disk.flushes_during(|| ours = Some(runs(Via::Ours(real), &[], "b")));
    let ours = ours.unwrap();
    Flushes {
        control: control_flushes,
        floor,
        eaten: our_flushes,
    }
    .assert_eaten(6 * ROUNDS as u64, "sync_calls through the runtime");
    assert_eq!(
        (ours.status, &ours.stdout, &ours.stderr),
        (control.status, &control.stdout, &control.stderr),
        "{}",
        text(&ours)
    );
    assert!(disk.join("b0").is_file());
}

#[test]
fn a_dynamic_program_gets_the_library() {
    let program = probe_for(Libc::Musl, "sync_calls", &[]);
    let disk = LoopFs::new("runtime-dynamic", 64);
    let bundle = Bundle::new("runtime-dynamic", &[&program], &disk);
    compare(&bundle, &disk, &inside(&program), "runc", |_| {});
}

#[test]
fn a_static_program_gets_the_seccomp_rules() {
    let program = probe("sync_calls", &["-static"]);
    let disk = LoopFs::new("runtime-static", 64);
    let bundle = Bundle::new("runtime-static", &[&program], &disk);
    compare(&bundle, &disk, &inside(&program), "runc", |_| {});
}

/// The fact that shaped the edit: Docker's default profile allows the sync
/// calls by name, and a rule added after it alone would change nothing.
#[test]
fn a_static_program_under_dockers_profile() {
    let docker: Value = serde_json::from_str(DOCKER).unwrap();
    let profile = docker["linux"]["seccomp"].clone();
    let program = probe("sync_calls", &["-static"]);
    let disk = LoopFs::new("runtime-docker-profile", 64);
    let bundle = Bundle::new("runtime-docker-profile", &[&program], &disk);
    compare(&bundle, &disk, &inside(&program), "runc", |spec| {
        spec["linux"]["seccomp"] = profile.clone();
    });
}

/// The rules' guard (`src/wrapper/profile/rules.rs`): a sync call on
/// descriptor -1 fails `EBADF` as under runc, from a static program with
/// the register's upper half sign-extended or zero, and from an i386 one,
/// under Docker's profile and under the one the runtime makes for a spec
/// without. The control that the rules are there: fsync of `/dev/null`,
/// which the kernel refuses with `EINVAL`, is answered 0.
#[test]
fn a_bad_descriptor_fails_as_under_runc() {
    let docker: Value = serde_json::from_str(DOCKER).unwrap();
    let profile = docker["linux"]["seccomp"].clone();
    let native = probe("container_parity", &["-static"]);
    let i386 = probe("container_parity", &["-m32", "-static"]);
    let disk = LoopFs::new("runtime-badfd", 64);
    let bundle = Bundle::new("runtime-badfd", &[&native, &i386], &disk);
    for program in [&native, &i386] {
        for with_profile in [true, false] {
            let change = |spec: &mut Value| match with_profile {
                true => spec["linux"]["seccomp"] = profile.clone(),
                false => drop(spec["linux"].as_object_mut().unwrap().remove("seccomp")),
            };
            let case = format!("{} with_profile={with_profile}", program.display());
            let run = |via: Via, what: &str| {
                let output = bundle.run(via, &[&inside(program), what], change);
                assert!(output.status.success(), "{case}: {}", text(&output));
                String::from_utf8(output.stdout).unwrap()
            };
            let alone = run(Via::Alone("runc"), "badfd");
            let ours = run(Via::Ours("runc"), "badfd");
            assert_eq!(ours, alone, "{case}");
            assert_eq!(alone.lines().count(), 6, "{case}: {alone}");
            assert!(
                alone.lines().all(|l| l.ends_with("=EBADF")),
                "{case}: {alone}"
            );
            assert_eq!(run(Via::Alone("runc"), "nullfd"), "fsync_devnull=EINVAL\n");
            assert_eq!(
                run(Via::Ours("runc"), "nullfd"),
                "fsync_devnull=0\n",
                "{case}"
            );
        }
    }
}

/// An image that sets its own `LD_PRELOAD` keeps it, after ours: both
/// libraries load, and the syncs are eaten.
#[test]
fn the_images_preload_is_kept() {
    let program = probe_for(Libc::Musl, "sync_calls", &[]);
    let theirs = probe_for(Libc::Musl, "hello_lib", &["-shared", "-fPIC"]);
    let disk = LoopFs::new("runtime-image-preload", 64);
    let bundle = Bundle::new("runtime-image-preload", &[&program, &theirs], &disk);
    let name = theirs.file_name().unwrap().to_str().unwrap();
    let image_preload = |spec: &mut Value| {
        let env = spec["process"]["env"].as_array_mut().unwrap();
        env.push(json!(format!("LD_PRELOAD=/bin/{name}")));
    };
    compare(&bundle, &disk, &inside(&program), "runc", image_preload);
    let spec: Value = serde_json::from_slice(&std::fs::read(bundle.config()).unwrap()).unwrap();
    let env = spec["process"]["env"].as_array().unwrap();
    let preload = format!("LD_PRELOAD={MOUNTED} /bin/{name}");
    assert!(env.iter().any(|e| e == &json!(preload)), "{env:?}");
    let ours = bundle.run(
        Via::Ours("runc"),
        &[&inside(&program), "/data/c"],
        image_preload,
    );
    assert_eq!(String::from_utf8_lossy(&ours.stderr), "hello_lib loaded\n");
}

/// `docker exec`: the engine's process file has no `LD_PRELOAD`; through
/// the runtime it gets one, where the container has the library. The
/// oracle is what the kernel kept of the sync flags of `open_flags`'s
/// opens (`fcntl(F_GETFL)`), which no seccomp rule can drop: only the
/// library does.
#[test]
fn exec_gets_the_preload_too() {
    let hold = probe("hold", &["-static"]);
    let program = probe_for(Libc::Musl, "open_flags", &[]);
    let disk = LoopFs::new("runtime-exec", 16);
    let bundle = Bundle::new("runtime-exec", &[&hold, &program], &disk);
    let mut process = bundle.base["process"].clone();
    let mut exec = |container: &Container, via: Via, dir: &str| {
        std::fs::create_dir_all(disk.join(dir)).unwrap();
        process["args"] = json!([inside(&program), format!("/data/{dir}")]);
        let output = container.exec(via, &process);
        assert!(output.status.success(), "{}", text(&output));
        output
    };
    let ours = Container::start(&bundle, Via::Ours("runc"), &inside(&hold));
    let control = exec(&ours, Via::Alone("runc"), "a");
    let eaten = exec(&ours, Via::Ours("runc"), "b");
    let (control, eaten) = (
        String::from_utf8(control.stdout).unwrap(),
        String::from_utf8(eaten.stdout).unwrap(),
    );
    assert!(
        control.contains("open: sync=1 dsync=1 direct=1"),
        "{control}"
    );
    assert_eq!(control.lines().count(), eaten.lines().count(), "{eaten}");
    assert!(
        eaten
            .lines()
            .all(|line| line.contains("sync=0 dsync=0 direct=0")),
        "{eaten}"
    );
    drop(ours);
    // A container not created through ours has no library: exec through
    // ours then sets nothing, or every process would warn of a missing one.
    let plain = Container::start(&bundle, Via::Alone("runc"), &inside(&hold));
    let output = exec(&plain, Via::Ours("runc"), "c");
    assert_eq!(
        String::from_utf8(output.stdout.clone()).unwrap(),
        control.replace("/data/a", "/data/c")
    );
    assert!(output.stderr.is_empty(), "{}", text(&output));
}

#[test]
fn the_off_switch_leaves_the_container_alone() {
    let program = probe("sync_calls", &["-static"]);
    let disk = LoopFs::new("runtime-off", 64);
    let bundle = Bundle::new("runtime-off", &[&program], &disk);
    let off = |spec: &mut Value| {
        let env = spec["process"]["env"].as_array_mut().unwrap();
        env.push(json!("EATMYDATA_DISABLE=1"));
    };
    let mut output = None;
    let flushes = disk.flushes_during_sync(|| {
        output = Some(bundle.run(Via::Ours("runc"), &[&inside(&program), "/data/a"], off));
    });
    let output = output.unwrap();
    assert!(output.status.success(), "{}", text(&output));
    assert!(flushes >= 6, "off: {flushes} flushes");
    // Not a byte of the spec changed.
    let spec: Value = serde_json::from_slice(&std::fs::read(bundle.config()).unwrap()).unwrap();
    let mut expected = bundle.base.clone();
    expected["process"]["args"] = json!([inside(&program), "/data/a"]);
    off(&mut expected);
    without_barrier(&mut expected);
    assert_eq!(spec, expected);
}

/// A Go program (static, `CGO_ENABLED=0`): its own system calls, answered
/// by the rules; 20 fsyncs of a file beside a control that flushed them.
#[test]
fn a_go_program_gets_the_seccomp_rules() {
    let program = crate::seccomp::go_probe("static");
    let disk = LoopFs::new("runtime-go", 64);
    let bundle = Bundle::new("runtime-go", &[&program], &disk);
    let inside = inside(&program);
    let run = |via, file| bundle.run(via, &[&inside, "loop", file, "20"], |_| {});
    let mut control = None;
    let control_flushes =
        disk.flushes_during(|| control = Some(run(Via::Alone("runc"), "/data/a")));
    nosync_into(disk.path());
    let floor = disk.flushes_during(|| {
        let floor = bundle.run(
            Via::Alone("runc"),
            &["/data/nosync", &inside, "loop", "/data/f", "20"],
            |_| {},
        );
        assert!(floor.status.success(), "floor: {}", text(&floor));
    });
    let mut ours = None;
    let our_flushes = disk.flushes_during(|| ours = Some(run(Via::Ours("runc"), "/data/b")));
    let (control, ours) = (control.unwrap(), ours.unwrap());
    assert!(control.status.success(), "{}", text(&control));
    assert_eq!(
        (ours.status, &ours.stdout),
        (control.status, &control.stdout),
        "{}",
        text(&ours)
    );
    Flushes {
        control: control_flushes,
        floor,
        eaten: our_flushes,
    }
    .assert_eaten(20, "a Go program through the runtime");
}
