//! The Dockerfile recipe (`contrib/container/Dockerfile`): the static
//! command copied in alone, from a build context that holds nothing else,
//! the RUN step's dpkg syncs eaten, the ENTRYPOINT too.

use std::fs;
use std::path::Path;

use super::{Image, data_volume, debian_image, floor_program, podman_ok};
use crate::common::{Flushes, TempDir, static_pair};
use crate::loopfs::LoopFs;

#[test]
fn a_dockerfile_copies_the_static_command_in_and_uses_it() {
    let base = debian_image(&[]);
    let dockerfile = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/container/Dockerfile");
    let dir = TempDir::new("podman-dockerfile");
    // The build context: the command, and no library to copy.
    let context = dir.join("context");
    fs::create_dir(&context).unwrap();
    fs::copy(static_pair().join("eatmydata"), context.join("eatmydata")).unwrap();
    // Each process under the library appends what it skipped here: the
    // oracle for the RUN step (only the test sets it).
    let report_dir = dir.join("report");
    fs::create_dir(&report_dir).unwrap();
    fs::write(report_dir.join("report"), "").unwrap();
    let image = Image(format!("eatmydata-test-dockerfile-{}", std::process::id()));
    podman_ok(&[
        "build",
        "--quiet",
        // A cached RUN layer would run nothing.
        "--no-cache",
        "--build-arg",
        &format!("BASE={base}"),
        "--env",
        "EATMYDATA_REPORT=/emd/report",
        "-v",
        &format!("{}:/emd", report_dir.display()),
        "-f",
        dockerfile.to_str().unwrap(),
        "-t",
        &image.0,
        context.to_str().unwrap(),
    ]);
    let report = fs::read_to_string(report_dir.join("report")).unwrap();
    let dpkg_fsyncs: u64 = report
        .lines()
        .filter(|line| line.contains(" name=dpkg "))
        .filter_map(|line| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix("fsync="))
        })
        .map(|n| n.parse::<u64>().unwrap())
        .sum();
    assert!(dpkg_fsyncs >= 20, "dpkg's fsyncs were not eaten:\n{report}");

    // The ENTRYPOINT: what the container runs gets the library.
    let version = podman_ok(&["run", "--rm", &image.0]);
    assert!(version.starts_with("3."), "{version}");
    let disk = LoopFs::new("podman-dockerfile-disk", 64);
    let volume = data_volume(&disk);
    let mut sql = String::from("create table t(x);");
    for n in 0..40 {
        sql.push_str(&format!("insert into t values({n});"));
    }
    let control = disk.flushes_during(|| {
        podman_ok(&[
            "run",
            "--rm",
            "-v",
            &volume,
            "--entrypoint",
            "sqlite3",
            &image.0,
            "/data/a.db",
            &sql,
        ]);
    });
    let nosync = floor_program(&disk);
    let floor = disk.flushes_during(|| {
        podman_ok(&[
            "run",
            "--rm",
            "-v",
            &volume,
            "--entrypoint",
            nosync,
            &image.0,
            "sqlite3",
            "/data/f.db",
            &sql,
        ]);
    });
    let eaten = disk.flushes_during(|| {
        podman_ok(&[
            "run",
            "--rm",
            "-v",
            &volume,
            &image.0,
            "sqlite3",
            "/data/b.db",
            &sql,
        ]);
    });
    Flushes {
        control,
        floor,
        eaten,
    }
    .assert_eaten(40, "sqlite3 in the Dockerfile's image");
    let count = podman_ok(&[
        "run",
        "--rm",
        "-v",
        &volume,
        "--entrypoint",
        "sqlite3",
        &image.0,
        "/data/b.db",
        "select count(*), sum(x) from t",
    ]);
    assert_eq!(count, "40|780\n");
}
