//! The cases of issue 36: what the container's first program starts, not
//! only that program, sees what it would under runc. A sanitizer program
//! started by a shell, `--init` before i386, arm64 and ASan programs, an
//! i386 program started by a dynamic shell and by a static program, i386
//! and ASan programs on a volume, a user's own `LD_PRELOAD` of libasan, a
//! chroot made by debootstrap running its shell and apt, and `ldd`. Each
//! program fsyncs [`SYNCS`] times on a loop device, so that its flushes
//! are counted too: under the runtime the seccomp rules still eat them.
//!
//! And what a static init runs is judged in its place (`docker run
//! --init`, tini as an image's entry point, with options and no `--`, gosu
//! as one (a static Go program), by
//! `docker exec`, and executed by a shell, as entry scripts do, where the
//! library's exec wrapper judges it): a dynamic program has the library (it maps it, and
//! its `O_DSYNC` writes, which no seccomp rule reaches, make no flushes);
//! a static one starts without the loader's warning.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use super::images::{ARM64, ASAN, GOSU, PROBE, PROBE32, STATIC, TINI, run};
use super::{Case, Control, Known, Outcome, Parity, Runtime, SYNCS};
use crate::common::{TempDir, probe};
use crate::loopfs::LoopFs;

/// The probe's fsync loop on the loop device at `/data`.
fn looping() -> String {
    format!("loop /data/synced {SYNCS}")
}

/// `args` (words) after `first`, as a list.
fn words<'a>(first: &[&'a str], args: &'a str) -> Vec<&'a str> {
    first.iter().copied().chain(args.split(' ')).collect()
}

/// A case where the runtime's program maps the library, runc's not.
fn mapping(name: &'static str, run: fn(&Parity, Runtime, &str) -> Outcome) -> Case {
    Case {
        known: Some(Known::LibraryMapped),
        ..flushing(name, run)
    }
}

/// Runs `args` in the shell image with `options` and a loop device at
/// `/data`: its outcome, with the flushes counted.
fn counted(
    parity: &Parity,
    runtime: Runtime,
    name: &str,
    options: &[&str],
    args: &[&str],
) -> Outcome {
    let disk = LoopFs::new(&format!("children-{}", runtime.label()), 64);
    let mount = format!("{}:/data", disk.path().display());
    let mut all = vec!["-v", &mount];
    all.extend(options);
    let mut outcome = None;
    let flushes = disk.flushes_during(|| {
        outcome = Some(parity.run(runtime, name, &parity.images.shell, &all, args, super::none));
    });
    let mut outcome = outcome.unwrap();
    outcome.flushes = Some(flushes);
    outcome
}

/// A case whose program fsyncs: `args` made of the loop's words.
fn flushing(name: &'static str, run: fn(&Parity, Runtime, &str) -> Outcome) -> Case {
    Case {
        name,
        control: Control::Succeeds,
        known: None,
        run,
    }
}

/// A folder of the host holding the i386 and ASan probes, bound at `/vol`
/// (so that `create` cannot read them in the rootfs).
fn volume() -> (TempDir, String) {
    let dir = TempDir::new("children-volume");
    for (program, name) in [
        (probe("container_parity", &["-m32"]), "probe32"),
        (probe("container_parity", &["-fsanitize=address"]), "asan"),
    ] {
        fs::copy(program, dir.join(name)).unwrap();
    }
    let mount = format!("{}:/vol:ro", dir.path().display());
    (dir, mount)
}

/// The Debian tree `scripts/debian-rootfs` keeps (debootstrap's minbase,
/// with apt's lists), bound read-only at `/target` for `chroot`.
fn debootstrapped() -> PathBuf {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/debian-rootfs");
    PathBuf::from(run(Command::new(script).arg("none")).trim())
}

pub fn cases() -> Vec<Case> {
    vec![
        flushing("sh -c ./asan", |p, r, n| {
            let line = format!("cd /bin && ./asan {}", looping());
            counted(p, r, n, &[], &["sh", "-c", &line])
        }),
        flushing("--init: i386", |p, r, n| {
            let line = looping();
            let args: Vec<&str> = [PROBE32].into_iter().chain(line.split(' ')).collect();
            counted(p, r, n, &["--init"], &args)
        }),
        flushing("--init: arm64", |p, r, n| {
            let line = looping();
            let args: Vec<&str> = [ARM64].into_iter().chain(line.split(' ')).collect();
            counted(p, r, n, &["--init"], &args)
        }),
        flushing("--init: ASan", |p, r, n| {
            let line = looping();
            let args: Vec<&str> = [ASAN].into_iter().chain(line.split(' ')).collect();
            counted(p, r, n, &["--init"], &args)
        }),
        mapping("--init: a dynamic program has the library", |p, r, n| {
            let args = [PROBE, "mapped"];
            p.run(r, n, &p.images.shell, &["--init"], &args, super::none)
        }),
        flushing("--init: dynamic", |p, r, n| {
            counted(p, r, n, &["--init"], &words(&[PROBE], &looping()))
        }),
        flushing("--init: dynamic, O_DSYNC", |p, r, n| {
            let line = format!("dsync /data/written {SYNCS}");
            counted(p, r, n, &["--init"], &words(&[PROBE], &line))
        }),
        flushing("--init: static", |p, r, n| {
            counted(p, r, n, &["--init"], &words(&[STATIC], &looping()))
        }),
        mapping("image's tini: options, no --", |p, r, n| {
            let options = ["--entrypoint", TINI];
            let args = ["-s", "-g", PROBE, "mapped"];
            p.run(r, n, &p.images.shell, &options, &args, super::none)
        }),
        mapping("image's gosu: gosu USER a dynamic program", |p, r, n| {
            let options = ["--entrypoint", GOSU];
            let args = ["root", PROBE, "mapped"];
            p.run(r, n, &p.images.shell, &options, &args, super::none)
        }),
        mapping("sh -c 'exec tini -- a dynamic program'", |p, r, n| {
            let line = format!("exec {TINI} -s -- {PROBE} mapped");
            p.run(
                r,
                n,
                &p.images.shell,
                &[],
                &["sh", "-c", &line],
                super::none,
            )
        }),
        mapping("exec: tini -s -- a dynamic program", |p, r, n| {
            p.exec(r, n, &p.images.shell, &[TINI, "-s", "--", PROBE, "mapped"])
        }),
        flushing("sh -c i386", |p, r, n| {
            let line = format!("{PROBE32} {}", looping());
            counted(p, r, n, &[], &["sh", "-c", &line])
        }),
        flushing("static program starts i386", |p, r, n| {
            let line = looping();
            let args: Vec<&str> = [STATIC, "exec", PROBE32]
                .into_iter()
                .chain(line.split(' '))
                .collect();
            counted(p, r, n, &[], &args)
        }),
        flushing("i386 on a volume", |p, r, n| {
            let (_dir, mount) = volume();
            let line = looping();
            let args: Vec<&str> = ["/vol/probe32"]
                .into_iter()
                .chain(line.split(' '))
                .collect();
            counted(p, r, n, &["-v", &mount], &args)
        }),
        flushing("ASan on a volume", |p, r, n| {
            let (_dir, mount) = volume();
            let line = looping();
            let args: Vec<&str> = ["/vol/asan"].into_iter().chain(line.split(' ')).collect();
            counted(p, r, n, &["-v", &mount], &args)
        }),
        flushing("own LD_PRELOAD=libasan.so.8", |p, r, n| {
            let line = format!("{ASAN} {}", looping());
            let options = ["-e", "LD_PRELOAD=libasan.so.8"];
            counted(p, r, n, &options, &["sh", "-c", &line])
        }),
        Case {
            name: "chroot: debootstrap's sh and apt",
            control: Control::Succeeds,
            known: None,
            run: |p, r, n| {
                let mount = format!("{}:/target:ro", debootstrapped().display());
                let line = "echo in the chroot; apt-get --version | head -n 1; ls /";
                let args = ["chroot", "/target", "/bin/sh", "-c", line];
                p.run(r, n, &p.images.shell, &["-v", &mount], &args, super::none)
            },
        },
        Case {
            name: "ldd of a dynamic program",
            control: Control::Succeeds,
            known: None,
            run: |p, r, n| {
                // The addresses differ from run to run: cut off.
                let line = format!("ldd {PROBE} | while read -r l; do echo \"${{l%% (*}}\"; done");
                p.run(
                    r,
                    n,
                    &p.images.shell,
                    &[],
                    &["sh", "-c", &line],
                    super::none,
                )
            },
        },
    ]
}
