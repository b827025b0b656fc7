//! podman's `--init`: the process is `/run/podman-init -- PROGRAM ARGS`,
//! catatonit (static) bound from the host, which the runtime looks
//! through to PROGRAM. The corpus's shell image, loaded into podman's
//! store, each case run with runc and with the runtime (given as podman
//! must be given it: the script that names the test's root home,
//! `at_home.rs`) and judged as the corpus judges: a dynamic program maps
//! the library under the runtime alone, and its fsyncs and `O_DSYNC`
//! writes are eaten (the latter reach no seccomp rule); i386 and static
//! programs are the same as under runc, and their fsyncs eaten too.

use std::process::Stdio;

use super::images::{Images, PROBE, PROBE32, STATIC};
use super::{Control, Known, Outcome, Row, Runtime, SYNCS, ids_hidden, table, verdict};
use crate::common::{Flushes, floor_writing};
use crate::containers::at_home::{runtime_at_home, wait_for_a_record_at_home};
use crate::containers::podman;
use crate::loopfs::LoopFs;

/// `args` in the shell image under podman's `--init` with `runtime`, a
/// loop device at `/data`: the outcome, its flushes counted.
fn run(runtime: Runtime, image: &str, args: &[&str]) -> Outcome {
    let disk = LoopFs::new(&format!("podman-init-{}", runtime.label()), 64);
    let mut podman = podman();
    if runtime == Runtime::Eatmydata {
        podman.arg("--runtime").arg(runtime_at_home());
    }
    podman
        .args(["run", "--rm", "--init", "--network=none", "-v"])
        .arg(format!("{}:/data", disk.path().display()))
        .arg(image)
        .args(args)
        .stdin(Stdio::null());
    let mut output = None;
    let flushes = disk.flushes_during(|| output = Some(podman.output().expect("run podman")));
    let output = output.unwrap();
    Outcome {
        status: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: ids_hidden(&String::from_utf8_lossy(&output.stderr)),
        flushes: Some(flushes),
        ..Outcome::default()
    }
}

#[test]
fn podman_init_runs_its_program_as_under_runc_with_the_library_where_it_fits() {
    let images = Images::make();
    images.load(podman);
    let image = images.shell.tag.clone();
    let looping = format!("loop /data/synced {SYNCS}");
    let dsync = format!("dsync /data/written {SYNCS}");
    let words = |first: &str, rest: &str| -> Vec<String> {
        std::iter::once(first)
            .chain(rest.split(' '))
            .map(str::to_owned)
            .collect()
    };
    let cases: [(&'static str, Option<Known>, Vec<String>); 5] = [
        (
            "podman --init: a dynamic program has the library",
            Some(Known::LibraryMapped),
            words(PROBE, "mapped"),
        ),
        ("podman --init: dynamic", None, words(PROBE, &looping)),
        (
            "podman --init: dynamic, O_DSYNC",
            None,
            words(PROBE, &dsync),
        ),
        ("podman --init: i386", None, words(PROBE32, &looping)),
        ("podman --init: static", None, words(STATIC, &looping)),
    ];
    let mut rows = Vec::new();
    for &(name, known, ref args) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let runc = run(Runtime::Runc, &image, &args);
        let eaten = run(Runtime::Eatmydata, &image, &args);
        let verdict = verdict(Control::Succeeds, known, &runc, &eaten);
        rows.push(Row {
            name,
            runc,
            eaten,
            verdict,
        });
    }
    eprintln!("{}", table(&rows));
    let differing: Vec<&str> = rows
        .iter()
        .filter(|row| row.verdict.is_err())
        .map(|row| row.name)
        .collect();
    assert!(differing.is_empty(), "differ from runc: {differing:?}");
    // The syncing cases' flushes: runc's reached the disk, the runtime's not.
    let floor_disk = LoopFs::new("podman-init-floor", 64);
    let floor = floor_writing(&floor_disk, "floor", SYNCS as usize * 4096);
    for (row, (_, known, _)) in rows.iter().zip(&cases) {
        if known.is_some() {
            continue;
        }
        Flushes {
            control: row.runc.flushes.unwrap(),
            floor,
            eaten: row.eaten.flushes.unwrap(),
        }
        .assert_eaten(u64::from(SYNCS), &format!("{} under the runtime", row.name));
    }
    wait_for_a_record_at_home();
}
