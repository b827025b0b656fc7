//! The Action's apt step (`action/apt.sh`) in a Debian tree of its own
//! (`chroot`): `apt-get install` of a local package after the step makes
//! no more than its floor allows (`common::flushes`); the post step's removal
//! leaves the tree's files as they were, and dpkg flushing again.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::repository;
use crate::common::{Flushes, command, nosync_into};
use crate::loopfs::LoopFs;

/// Flush requests the device completes for `apt-get install` of a local
/// package with 300 files in a Debian tree, synced afterwards, run under
/// `prefix` (nothing, or `/nosync ` for the floor).
fn apt_install(fs: &LoopFs, root: &Path, prefix: &str) -> u64 {
    let sync = || {
        let status = Command::new("sync").arg("-f").arg(fs.path()).status();
        assert!(status.unwrap().success());
    };
    chroot(
        root,
        "dpkg -r eatmydata-action-test >/dev/null 2>&1 || true",
    );
    sync();
    let before = fs.flushes();
    let out = chroot(
        root,
        &format!("{prefix}apt-get install -y /tmp/eatmydata-action-test.deb"),
    );
    sync();
    assert!(out.contains("Setting up eatmydata-action-test"), "{out}");
    fs.flushes() - before
}

fn chroot(root: &Path, script: &str) -> String {
    let output = Command::new("chroot")
        .arg(root)
        .args(["/bin/sh", "-ec", script])
        .env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .env("LC_ALL", "C")
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "in the tree, `{script}`: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The Action's apt step, as run by main.js's `apt.sh` in a Debian tree:
/// `apt-get install` of a local package makes at most 5% of the flushes
/// it made before the step.
#[test]
fn the_actions_apt_step_puts_dpkg_under_eatmydata() {
    let fs = LoopFs::new("action-apt", 1024);
    let root: PathBuf = fs.join("root");
    let script = repository().join("scripts/debian-rootfs");
    let made = Command::new(script).arg(&root).output().unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    fs::copy(command(), root.join("usr/local/bin/eatmydata")).unwrap();
    fs::copy(repository().join("action/apt.sh"), root.join("tmp/apt.sh")).unwrap();
    chroot(
        &root,
        "mkdir -p /tmp/pkg/DEBIAN /tmp/pkg/usr/share/eatmydata-action-test
         for n in $(seq 300); do echo $n > /tmp/pkg/usr/share/eatmydata-action-test/$n; done
         printf 'Package: eatmydata-action-test\\nVersion: 1\\nArchitecture: all\\nMaintainer: t <t@t>\\nDescription: t\\n' > /tmp/pkg/DEBIAN/control
         dpkg-deb --build /tmp/pkg /tmp/eatmydata-action-test.deb >/dev/null",
    );
    nosync_into(&root);
    // Not `ls`'s "total" lines: blocks a file system allots may differ.
    let listing = "ls -lA /usr/local/bin /etc/apt/apt.conf.d | grep -v '^total '";
    let before = chroot(&root, listing);
    let control = apt_install(&fs, &root, "");
    let floor = apt_install(&fs, &root, "/nosync ");
    let said = chroot(&root, "sh /tmp/apt.sh /usr/local '' 2>&1");
    assert!(said.contains("dpkg under eatmydata"), "{said}");
    let eaten = apt_install(&fs, &root, "");
    Flushes {
        control,
        floor,
        eaten,
    }
    .assert_eaten(100, "apt-get install after the action's apt step");
    assert!(chroot(&root, "dpkg --verify eatmydata-action-test").is_empty());

    // The post step's half: the link and apt's setting gone, the
    // folders as they were, and dpkg flushing again.
    let said = chroot(&root, "sh /tmp/apt.sh /usr/local '' remove 2>&1");
    assert!(said.contains("dpkg as before"), "{said}");
    assert_eq!(chroot(&root, listing), before);
    let after = apt_install(&fs, &root, "");
    eprintln!("action apt: {after} flushes after apt.sh remove");
    assert!(after * 20 > control, "still eaten after remove: {after}");
}
