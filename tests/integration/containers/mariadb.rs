//! A MariaDB image run with the library mounted: its flushes eaten, and
//! its data all there after a clean shutdown.

use std::path::Path;

use super::{MOUNTED, data_volume, debian_image, floor_program, podman_ok};
use crate::common::{Flushes, static_pair};
use crate::loopfs::LoopFs;

/// The options that mount `tests/integration/containers/mariadb.sh` and
/// the loop file system, for a `podman run` of the MariaDB image.
fn mariadb_mounts(disk: &LoopFs) -> Vec<String> {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/containers/mariadb.sh");
    vec![
        "-v".into(),
        data_volume(disk),
        "-v".into(),
        format!("{}:/mariadb.sh:ro", script.display()),
    ]
}

#[test]
fn a_database_image_runs_with_the_library_mounted_and_keeps_its_data() {
    let image = debian_image(&["mariadb-server"]);
    let disk = LoopFs::new("podman-mariadb-disk", 768);
    let mounts = mariadb_mounts(&disk);
    let library = format!(
        "{}:{MOUNTED}:ro",
        static_pair().join("libeatmydata.so").display()
    );
    let preload = format!("LD_PRELOAD={MOUNTED}");
    let nosync = floor_program(&disk);
    let run = |extra: &[&str], script: &[&str]| {
        let mut args: Vec<&str> = vec!["run", "--rm"];
        args.extend(mounts.iter().map(String::as_str));
        args.extend(extra);
        args.push(&image);
        if script.first() == Some(&"floor") {
            args.push(nosync);
        }
        args.extend(["sh", "/mariadb.sh"]);
        let script = script.strip_prefix(&["floor"]).unwrap_or(script);
        args.extend(script);
        podman_ok(&args)
    };
    let control = disk.flushes_during(|| {
        run(&[], &["write", "plain", "200"]);
    });
    let floor = disk.flushes_during(|| {
        run(&[], &["floor", "write", "floor", "200"]);
    });
    let eaten = disk.flushes_during(|| {
        run(
            &["-v", &library, "-e", &preload],
            &["write", "eaten", "200"],
        );
    });
    Flushes {
        control,
        floor,
        eaten,
    }
    .assert_eaten(200, "MariaDB with the library mounted");
    // After the clean shutdown, a server without the library has it all.
    for name in ["plain", "floor", "eaten"] {
        assert_eq!(run(&[], &["check", name]), "200|19900\n", "{name}");
    }
}
