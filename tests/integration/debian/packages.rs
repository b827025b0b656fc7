//! Our packages take the place of Debian's with `dpkg -i`, stay there when
//! apt is asked for eatmydata or an upgrade, and go cleanly with `dpkg -r`
//! and `dpkg -P`; over held or half-configured packages, and while a
//! program runs under the library, they do what Debian's own do.

use std::fs;
use std::process::Command;

use super::{DEBIANS_COMMAND, DEBIANS_LIBRARY, LIBDIR, Tree, packages};

const DEBIANS_COMMAND_DEB: &str = "/var/cache/apt/archives/eatmydata_130-2_all.deb";
// The only libeatmydata1 archive in the tree: Debian's, for its architecture.
const DEBIANS_LIBRARY_DEB: &str = "/var/cache/apt/archives/libeatmydata1_130-2+b1_*.deb";

/// The files (not folders) a package holds, as paths from `/`.
fn files_of(deb: &std::path::Path) -> Vec<String> {
    let output = Command::new("dpkg-deb")
        .arg("-c")
        .arg(deb)
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| !line.starts_with('d'))
        .filter_map(|line| line.split_whitespace().nth(5))
        .map(|path| path.trim_start_matches('.').to_owned())
        .collect()
}

fn assert_ours_installed(tree: &Tree) {
    let ours = &packages().version;
    assert_eq!(tree.state("eatmydata"), Some(format!("ii {ours}")));
    assert_eq!(tree.state("libeatmydata1"), Some(format!("ii {ours}")));
    assert_eq!(
        tree.ok("dpkg --verify eatmydata libeatmydata1; dpkg --audit"),
        ""
    );
}

#[test]
fn dpkg_i_replaces_debians_packages_and_remove_and_purge_leave_nothing() {
    let tree = Tree::fresh("deb-replace");
    // Control: Debian's packages are there, its command a shell script.
    assert_eq!(
        tree.state("eatmydata"),
        Some(format!("ii {DEBIANS_COMMAND}"))
    );
    assert_eq!(
        tree.state("libeatmydata1"),
        Some(format!("ii {DEBIANS_LIBRARY}"))
    );
    let command = tree.path().join("usr/bin/eatmydata");
    assert!(fs::read(&command).unwrap().starts_with(b"#!"));

    tree.install_ours();
    assert_ours_installed(&tree);
    assert!(fs::read(&command).unwrap().starts_with(b"\x7fELF"));
    // Debian's library file went with its package; ours is under its SONAME
    // with the bare name beside it.
    let libraries = tree.ok(&format!("ls {LIBDIR} | grep eatmydata"));
    assert_eq!(libraries, "libeatmydata.so\nlibeatmydata.so.1\n");
    let verbose = tree.sh("eatmydata -v true");
    assert!(verbose.status.success());
    assert!(
        String::from_utf8_lossy(&verbose.stderr)
            .contains(&format!("with {LIBDIR}/libeatmydata.so.1 preloaded")),
        "{}",
        String::from_utf8_lossy(&verbose.stderr)
    );
    assert!(
        tree.ok("man -w eatmydata 2>/dev/null || ls /usr/share/man/man1/eatmydata.1.gz")
            .contains("eatmydata.1.gz")
    );
    // The OCI runtime, a link beside the command, registers itself by that
    // path (the dry run writes nothing).
    assert_eq!(
        tree.ok("readlink /usr/bin/eatmydata-runtime"),
        "eatmydata\n"
    );
    let dry = tree.ok("eatmydata-runtime configure docker --dry-run");
    assert!(
        dry.contains("+            \"path\": \"/usr/bin/eatmydata-runtime\""),
        "{dry}"
    );
    assert!(!tree.path().join("etc/docker").exists());
    assert_eq!(
        tree.ok("readlink /usr/share/man/man1/eatmydata-runtime.1.gz"),
        "eatmydata.1.gz\n"
    );

    tree.ok("dpkg -r eatmydata libeatmydata1");
    let left = |tree: &Tree| -> Vec<String> {
        [&packages().command, &packages().library]
            .into_iter()
            .flat_map(|deb| files_of(deb))
            .filter(|file| !file.starts_with("/usr/share/doc/"))
            .filter(|file| tree.path().join(&file[1..]).symlink_metadata().is_ok())
            .collect()
    };
    assert_eq!(left(&tree), Vec::<String>::new(), "left after dpkg -r");
    tree.ok("dpkg -P eatmydata libeatmydata1");
    assert_eq!(tree.state("eatmydata"), None);
    assert_eq!(tree.state("libeatmydata1"), None);
    assert_eq!(left(&tree), Vec::<String>::new(), "left after dpkg -P");
    assert!(!tree.path().join("usr/share/doc/eatmydata").exists());
    assert_eq!(
        tree.ok(&format!("ls {LIBDIR} | grep -c eatmydata || true")),
        "0\n"
    );
}

#[test]
fn a_second_dpkg_i_and_apt_keep_ours_in_place() {
    let tree = Tree::fresh("deb-again");
    let ours = &packages().version;
    tree.install_ours();
    tree.install_ours();
    assert_ours_installed(&tree);

    // The first thing apt-eatmydata-action runs, and an upgrade: apt sees
    // Debian's 130-2 as older and keeps ours.
    let install = tree.ok("apt-get install -y eatmydata");
    assert!(
        install.contains(&format!("eatmydata is already the newest version ({ours})")),
        "{install}"
    );
    let upgrade = tree.ok("apt-get -s dist-upgrade");
    assert!(!upgrade.contains("eatmydata"), "{upgrade}");
    assert_ours_installed(&tree);
    // Control: apt does know Debian's version, and would install it if asked.
    let policy = tree.ok("apt-cache policy eatmydata");
    assert!(policy.contains(&format!("Candidate: {ours}")), "{policy}");
    assert!(policy.contains(DEBIANS_COMMAND), "{policy}");
    let downgrade = tree.ok(&format!("apt-get -s install eatmydata={DEBIANS_COMMAND}"));
    assert!(
        downgrade.contains(&format!("Inst eatmydata [{ours}] ({DEBIANS_COMMAND}")),
        "{downgrade}"
    );
}

/// `dpkg -i` of our packages and, as the control, of Debian's own, over
/// Debian's packages after `setup`: the same outcome for both.
fn replaces_as_debians_own_would(label: &str, setup: &str) {
    let ours = &packages().version;
    let control = Tree::fresh(&format!("{label}-control"));
    control.ok(setup);
    let debians = control.sh(&format!(
        "dpkg -i {DEBIANS_COMMAND_DEB} {DEBIANS_LIBRARY_DEB}"
    ));
    let tree = Tree::fresh(label);
    tree.ok(setup);
    let mine = tree.sh("dpkg -i /tmp/eatmydata.deb /tmp/libeatmydata1.deb");
    assert_eq!(
        mine.status.code(),
        debians.status.code(),
        "ours: {}\nDebian's: {}",
        String::from_utf8_lossy(&mine.stderr),
        String::from_utf8_lossy(&debians.stderr)
    );
    assert!(
        mine.status.success(),
        "{}",
        String::from_utf8_lossy(&mine.stderr)
    );
    assert_eq!(
        control.state("libeatmydata1"),
        Some(format!("ii {DEBIANS_LIBRARY}"))
    );
    assert_ours_installed(&tree);
    // A hold stays a hold for apt, for theirs and ours alike.
    assert_eq!(
        tree.ok("apt-mark showhold"),
        control.ok("apt-mark showhold")
    );
    let _ = ours;
}

#[test]
fn held_debian_packages_are_replaced_as_debians_own_would_be() {
    replaces_as_debians_own_would("deb-held", "apt-mark hold eatmydata libeatmydata1");
}

#[test]
fn half_configured_debian_packages_are_replaced_as_debians_own_would_be() {
    // Unpacked but not configured, as after an interrupted upgrade; then a
    // configuration that failed half-way (dpkg's half-configured state).
    replaces_as_debians_own_would(
        "deb-half",
        &format!(
            "dpkg --unpack {DEBIANS_LIBRARY_DEB}
             dpkg-query -W -f='${{db:Status-Abbrev}}' libeatmydata1 | grep -qx 'iU '
             sed -i '/^Package: eatmydata$/,/^$/s/^Status: install ok installed$/Status: install ok half-configured/' /var/lib/dpkg/status
             dpkg-query -W -f='${{db:Status-Abbrev}}' eatmydata | grep -qx 'iF '"
        ),
    );
}

#[test]
fn a_program_running_under_the_library_outlives_its_removal() {
    let tree = Tree::fresh("deb-busy");
    // The program started before the removal (it says so on one FIFO) and
    // goes on after it (told so on another); the one it starts then runs
    // without the library: under Debian's with the loader's warning, under
    // ours without (the library checks at exec that its path still leads
    // to it, and takes itself out of LD_PRELOAD when not: durability::exec).
    let script = "rm -f /tmp/out /tmp/started /tmp/removed; mkfifo /tmp/started /tmp/removed
        eatmydata sh -c 'echo >/tmp/started; read _ </tmp/removed; dd if=/dev/zero of=/tmp/out bs=4k count=4 conv=fsync status=none; echo finished' >/tmp/log 2>&1 &
        pid=$!
        read _ </tmp/started
        dpkg -r eatmydata libeatmydata1 >/dev/null
        echo >/tmp/removed
        wait $pid
        echo status=$?
        cat /tmp/log";
    let check = |whose: &str, output: &str, warned: bool| {
        assert!(output.starts_with("status=0\n"), "{whose}: {output}");
        assert!(output.ends_with("finished\n"), "{whose}: {output}");
        assert_eq!(
            output.contains("from LD_PRELOAD cannot be preloaded"),
            warned,
            "{whose}: {output}"
        );
        assert_eq!(
            fs::metadata(tree.path().join("tmp/out")).unwrap().len(),
            16384
        );
        assert_eq!(
            tree.sh("eatmydata true").status.code(),
            Some(127),
            "{whose}"
        );
    };
    // Control: Debian's own packages, removed the same way.
    check("Debian's", &tree.ok(script), true);
    tree.ok(&format!(
        "dpkg -i {DEBIANS_COMMAND_DEB} {DEBIANS_LIBRARY_DEB}"
    ));
    tree.install_ours();
    check("ours", &tree.ok(script), false);
}

/// lintian, Debian's package checker, finds no error in either package. The
/// warnings it keeps are listed in docs/debian.md.
#[test]
fn lintian_finds_no_error() {
    let packages = packages();
    let output = Command::new("lintian")
        .args(["--fail-on", "error", "--pedantic"])
        .arg(&packages.command)
        .arg(&packages.library)
        .output()
        .expect("run lintian (scripts/setup-test-deps installs it)");
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{report}");
    assert!(
        !report.lines().any(|line| line.starts_with("E:")),
        "{report}"
    );
    // Control: it did read them; this warning is expected (the bare name
    // must be in the library package, for LD_PRELOAD=libeatmydata.so).
    assert!(
        report.contains("libeatmydata1: link-to-shared-library-in-wrong-package"),
        "{report}"
    );
}
