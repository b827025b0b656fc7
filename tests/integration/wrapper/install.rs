//! `scripts/install.sh`: it lays out what the command finds, and
//! `--uninstall` removes exactly that.

use std::fs;
use std::path::Path;
use std::process::Command;

use super::stderr;
use crate::common::{Run, TempDir, command, library, probe};

#[test]
fn the_install_script_lays_out_what_the_command_finds() {
    library();
    let prefix = TempDir::new("install");
    // Install what this test run built, in whichever profile that is.
    let staged = prefix.join("src/target/release");
    fs::create_dir_all(&staged).unwrap();
    fs::copy(command(), staged.join("eatmydata")).unwrap();
    fs::copy(library(), staged.join("libeatmydata.so")).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in [
        "scripts/install.sh",
        "docs/eatmydata.1",
        "packaging/debian/eatmydata.bash-completion",
    ] {
        let to = prefix.join("src").join(file);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(source.join(file), to).unwrap();
    }
    let script = prefix.join("src/scripts/install.sh");
    let root = prefix.join("root");
    let status = Command::new("bash")
        .arg(&script)
        .args(["--no-build", "--prefix"])
        .arg(&root)
        .status()
        .unwrap();
    assert!(status.success());
    let installed_files = [
        "bin/eatmydata",
        "lib/eatmydata/libeatmydata.so",
        "share/man/man1/eatmydata.1",
        "share/bash-completion/completions/eatmydata",
    ];
    for file in installed_files {
        assert!(root.join(file).is_file(), "{file} not installed");
    }
    // The OCI runtime: a link to the command beside it, which answers as
    // the runtime.
    let runtime = root.join("bin/eatmydata-runtime");
    assert_eq!(fs::read_link(&runtime).unwrap(), Path::new("eatmydata"));
    let configure = Command::new(&runtime)
        .args(["configure", "--help"])
        .output()
        .unwrap();
    assert!(configure.status.success(), "{}", stderr(&configure));
    assert!(
        String::from_utf8_lossy(&configure.stdout)
            .starts_with("Usage: eatmydata-runtime configure ENGINE")
    );
    // Control: the command itself knows no such verb.
    let plain = Command::new(root.join("bin/eatmydata"))
        .args(["configure", "--help"])
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(127), "{}", stderr(&plain));

    let data = prefix.join("data");
    let installed = Run::new(root.join("bin/eatmydata"))
        .arg(probe("sync_calls", &[]))
        .arg(&data);
    let installed = installed.trace(&["fsync"]).run().success();
    assert!(
        installed.calls_of("fsync").is_empty(),
        "{:?}",
        installed.calls
    );

    // Uninstall removes exactly what was installed: a file of someone
    // else's in the same folder stays.
    fs::write(root.join("bin/other"), "").unwrap();
    let status = Command::new("bash")
        .arg(&script)
        .args(["--uninstall", "--prefix"])
        .arg(&root)
        .status()
        .unwrap();
    assert!(status.success());
    for file in installed_files {
        assert!(!root.join(file).exists(), "{file} left behind");
    }
    assert!(
        runtime.symlink_metadata().is_err(),
        "eatmydata-runtime left behind"
    );
    assert!(!root.join("lib/eatmydata").exists());
    assert!(root.join("bin/other").is_file());

    let bad = Command::new("bash")
        .arg(&script)
        .args(["--no-build", "--prefix", "relative"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).starts_with("eatmydata: install:"),
        "{}",
        stderr(&bad)
    );
}
