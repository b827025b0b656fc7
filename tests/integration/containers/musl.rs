//! musl images: the library mounted read-only with `LD_PRELOAD`, the static
//! command alone inside (it carries the library), and root in a container
//! getting the filter.

use std::process::Stdio;

use super::{
    MOUNTED, MuslImage, ROUNDS, data_volume, floor_program, podman, podman_ok, rounds, text,
};
use crate::common::{Flushes, Libc, probe_for, static_pair};
use crate::loopfs::LoopFs;

/// The control (`inside` alone) and the floor (under `nosync`) of a count,
/// each [`ROUNDS`] containers of `image` with `disk` as `/data`.
fn control_and_floor(disk: &LoopFs, image: &str, inside: &str) -> (u64, u64) {
    let volume = data_volume(disk);
    let control = disk.flushes_during_sync(|| {
        rounds("a", |file| {
            podman_ok(&["run", "--rm", "-v", &volume, image, inside, file])
        });
    });
    let nosync = floor_program(disk);
    let floor = disk.flushes_during(|| {
        rounds("f", |file| {
            podman_ok(&["run", "--rm", "-v", &volume, image, nosync, inside, file])
        });
    });
    (control, floor)
}

#[test]
fn a_musl_image_runs_with_the_library_mounted_read_only() {
    let program = probe_for(Libc::Musl, "sync_calls", &[]);
    let musl = MuslImage::new("musl", &program, false);
    let (image, inside) = (&musl.image, &musl.program);
    let library = static_pair().join("libeatmydata.so");
    let disk = LoopFs::new("podman-musl-disk", 64);
    let volume = data_volume(&disk);

    let (control, floor) = control_and_floor(&disk, &image.0, inside);
    let mount = format!("{}:{MOUNTED}:ro", library.display());
    let preload = format!("LD_PRELOAD={MOUNTED}");
    let mut printed = String::new();
    let eaten = disk.flushes_during(|| {
        printed = rounds("b", |file| {
            podman_ok(&[
                "run", "--rm", "-v", &volume, "-v", &mount, "-e", &preload, &image.0, inside, file,
            ])
        });
    });
    Flushes {
        control,
        floor,
        eaten,
    }
    .assert_eaten(6 * ROUNDS as u64, "sync_calls in a musl image");
    assert!(disk.join("b0").is_file(), "{printed}");
}

#[test]
fn the_static_command_runs_in_a_musl_image() {
    let program = probe_for(Libc::Musl, "sync_calls", &[]);
    let musl = MuslImage::new("static", &program, true);
    let (image, inside) = (&musl.image, &musl.program);
    let disk = LoopFs::new("podman-static-disk", 64);
    let volume = data_volume(&disk);

    let (control, floor) = control_and_floor(&disk, &image.0, inside);
    let eaten = disk.flushes_during(|| {
        rounds("b", |file| {
            podman_ok(&[
                "run",
                "--rm",
                "-v",
                &volume,
                &image.0,
                "/bin/eatmydata",
                inside,
                file,
            ])
        });
    });
    Flushes {
        control,
        floor,
        eaten,
    }
    .assert_eaten(6 * ROUNDS as u64, "sync_calls in a musl image");
    // Nothing but the command came in: the library it carries was placed
    // beside it inside the container (as root: never in /tmp).
    let printed = podman_ok(&["run", "--rm", &image.0, "/bin/eatmydata", "--print-library"]);
    assert!(
        printed.starts_with("/lib/eatmydata/libeatmydata-")
            || printed.starts_with("/usr/lib/eatmydata/libeatmydata-"),
        "{printed}"
    );
}

#[test]
fn root_in_a_container_gets_the_filter_and_true_advice() {
    // Root in a container lacks CAP_SYS_ADMIN: seccomp mode must set
    // no_new_privs, and "run eatmydata as root" would be wrong advice.
    let program = crate::common::probe("sync_calls", &["-static"]);
    let musl = MuslImage::new("root", &program, true);
    let (image, inside) = (&musl.image, &musl.program);
    let disk = LoopFs::new("podman-root-disk", 64);
    let volume = data_volume(&disk);
    let (control, floor) = control_and_floor(&disk, &image.0, inside);
    let mut output = None;
    let eaten = disk.flushes_during(|| {
        output = Some(rounds("b", |file| {
            podman()
                .args(["run", "--rm", "-v", &volume, &image.0, "/bin/eatmydata"])
                .args([inside.as_str(), file])
                .stdin(Stdio::null())
                .output()
                .expect("run podman")
        }));
    });
    let output = output.unwrap();
    assert!(output.status.success(), "{}", text(&output));
    Flushes {
        control,
        floor,
        eaten,
    }
    .assert_eaten(6 * ROUNDS as u64, "sync_calls in a musl image");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no_new_privs") && stderr.contains("root here lacks CAP_SYS_ADMIN"),
        "{stderr}"
    );
    assert!(!stderr.contains("run eatmydata as root"), "{stderr}");
}
