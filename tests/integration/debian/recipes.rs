//! The ways tools put eatmydata in front of apt and dpkg today, run with our
//! packages in a bookworm chroot that lives on a loop device of its own:
//! apt-eatmydata-action's (a `dpkg` link and `Dir::Bin::dpkg`), a command
//! prefix (sbuild's `--command-prefix=eatmydata`, pbuilder's), `LD_PRELOAD`
//! by the bare name (Dockerfiles, cowbuilder), and mmdebstrap's hook steps.
//! Each `apt-get install --reinstall` is counted in flush requests on the
//! device, against plain apt on a tree of its own.

use std::process::Command;

use super::{LIBDIR, Tree};
use crate::common::{Flushes, nosync_into};
use crate::loopfs::LoopFs;

/// Packages in the minbase tree whose archives it keeps: no network needed.
const REINSTALL: &str = "perl-base coreutils sed gzip hostname diffutils";
/// A run that loops or hangs fails instead of blocking the suite.
const LIMIT: &str = "timeout 300";

/// Syncs the file system, so that what was written is on the device.
fn sync(fs: &LoopFs) {
    let status = Command::new("sync").arg("-f").arg(fs.path()).status();
    assert!(status.unwrap().success(), "sync -f failed");
}

/// Flush requests the device completed for `run` in a fresh tree where our
/// packages are installed and `setup` has run, up to the file system being
/// synced afterwards (what it takes for the data to be on the disk). Checks
/// that every reinstalled file is intact, as after a plain install.
fn flushes_for(label: &str, setup: &str, run: &str) -> u64 {
    let fs = LoopFs::new(label, 1536);
    let tree = Tree::on(&fs);
    tree.install_ours();
    nosync_into(tree.path());
    tree.ok(setup);
    sync(&fs);
    let before = fs.flushes();
    let output = tree.ok(&format!("{LIMIT} {run}"));
    sync(&fs);
    let flushes = fs.flushes() - before;
    assert!(output.contains("Unpacking hostname"), "{output}");
    assert_eq!(
        tree.ok(&format!("dpkg --verify {REINSTALL}")),
        "",
        "{label}"
    );
    assert_eq!(tree.ok("dpkg --audit"), "", "{label}");
    eprintln!("{label}: {flushes} flushes");
    flushes
}

#[test]
fn apt_through_each_recipe_flushes_at_most_5_percent_of_plain_apt() {
    let apt = format!("apt-get install -y --reinstall {REINSTALL}");
    // dpkg syncs every file it unpacks: hundreds of flushes; the floor,
    // the same under nosync.
    let control = flushes_for("apt-plain", "true", &apt);
    let floor = flushes_for("apt-floor", "true", &format!("/nosync {apt}"));
    let recipes = [
        (
            "apt-action",
            // apt-eatmydata-action: install eatmydata (ours stays), link dpkg
            // to it, and point apt at the link.
            "apt-get install -y eatmydata
             ln -s /usr/bin/eatmydata /usr/local/bin/dpkg
             echo 'Dir::Bin::dpkg \"/usr/local/bin/dpkg\";' >/etc/apt/apt.conf.d/00eatmydata",
            apt.clone(),
        ),
        ("apt-prefix", "true", format!("eatmydata {apt}")),
        (
            "apt-bare-name",
            "true",
            format!("env LD_PRELOAD=libeatmydata.so {apt}"),
        ),
    ];
    for (label, setup, run) in recipes {
        Flushes {
            control,
            floor,
            eaten: flushes_for(label, setup, &run),
        }
        .assert_eaten(200, &format!("{label}, against plain apt"));
    }
}

/// mmdebstrap's eatmydata hook, step by step: it copies `/usr/bin/eatmydata`
/// and `libeatmydata.so*` out of the two packages into a tree that does not
/// have them installed, moves dpkg aside (a diversion) and puts a script in
/// its place that runs it through `/usr/bin/eatmydata`. The hook itself only
/// takes `eatmydata_*_all.deb`, which a native command cannot be: see
/// docs/debian.md.
#[test]
fn mmdebstrap_hook_steps_run_dpkg_through_the_packaged_command() {
    let fs = LoopFs::new("mmdebstrap-hook", 1536);
    let tree = Tree::on(&fs);
    tree.ok("dpkg -P eatmydata libeatmydata1");
    let root = tree.path().to_str().unwrap();
    let libdir = LIBDIR;
    let extract = format!(
        "set -e
         dpkg-deb --fsys-tarfile {root}/tmp/eatmydata.deb |
           tar --directory={root}/usr/bin --strip-components=3 --extract ./usr/bin/eatmydata
         dpkg-deb --fsys-tarfile {root}/tmp/libeatmydata1.deb |
           tar --directory={root}{libdir} --strip-components=4 --extract --wildcards '.{libdir}/libeatmydata.so*'
         mv {root}/usr/bin/dpkg {root}/usr/bin/dpkg.distrib
         printf '#!/bin/sh\\nexec /usr/bin/eatmydata /usr/bin/dpkg.distrib \"$@\"\\n' >{root}/usr/bin/dpkg
         chmod +x {root}/usr/bin/dpkg
         printf '/usr/bin/dpkg\\n/usr/bin/dpkg.distrib\\n:\\n' >>{root}/var/lib/dpkg/diversions"
    );
    let status = Command::new("sh").args(["-c", &extract]).status().unwrap();
    assert!(status.success(), "the hook's extract steps failed");
    assert_eq!(
        tree.ok(&format!("ls {libdir} | grep eatmydata")),
        "libeatmydata.so\nlibeatmydata.so.1\n"
    );

    let install = format!(
        "cd /var/cache/apt/archives && {LIMIT} dpkg -i hostname_*.deb sed_*.deb coreutils_*.deb"
    );
    let count = |script: &str| {
        let before = fs.flushes();
        tree.ok(script);
        sync(&fs);
        fs.flushes() - before
    };
    nosync_into(tree.path());
    Flushes {
        control: count(&install.replace("dpkg -i", "dpkg.distrib -i")),
        floor: count(&install.replace("dpkg -i", "/nosync dpkg.distrib -i")),
        eaten: count(&install),
    }
    .assert_eaten(20, "dpkg through the mmdebstrap hook");
    assert_eq!(tree.ok("dpkg.distrib --verify hostname sed coreutils"), "");
}
