//! The tests' own tools keep trees, venvs and locks under fixed names in
//! /var/tmp, which every user may write, and then run, chroot into or
//! write them as root. Security review 4 (issue 45): another local user
//! who made such a name first had root use their tree (a complete cache
//! for `scripts/debian-rootfs`) or truncate what their link at a lock's
//! name pointed to. `scripts/own-path` now takes such a name only when it
//! is root's alone. Each attack here is made by uid 65534 in a sticky
//! folder of the test's own, beside root's own files as the control.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A sticky folder every user may write, as /var/tmp, removed when dropped.
struct Sticky(PathBuf);

impl Sticky {
    /// Made new under the system's temporary folder, which every user
    /// may enter (a checkout's folders need not be).
    fn new(name: &str) -> Sticky {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let path = std::env::temp_dir().join(format!(
            "eatmydata-test-tooling-{name}-{}-{nanos}",
            std::process::id()
        ));
        fs::create_dir(&path).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o1777)).unwrap();
        Sticky(path)
    }
}

impl Drop for Sticky {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// `sh -c SCRIPT` as uid 65534, the other local user.
fn as_other(script: &str) {
    let status = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["sh", "-c", script])
        .status()
        .expect("run setpriv");
    assert!(status.success(), "as uid 65534: {script}");
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(name)
}

/// `scripts/debian-rootfs --cache CACHE none`, with a mirror that cannot
/// answer, so that nothing is fetched.
fn rootfs(cache: &Path) -> Output {
    Command::new(script("debian-rootfs"))
        .arg("--cache")
        .arg(cache)
        .arg("none")
        .env("EATMYDATA_MIRROR", "http://127.0.0.1:9/debian")
        .output()
        .expect("run debian-rootfs")
}

/// A complete tree at `cache`, as debian-rootfs leaves one.
const COMPLETE: &str = "mkdir -p {cache}/bin && echo planted > {cache}/bin/sh && \
                        touch {cache}/.eatmydata-complete";

#[test]
fn a_cache_another_user_made_is_never_given_as_the_tree() {
    let sticky = Sticky::new("cache");
    // The control: root's own complete tree is given.
    let own = sticky.0.join("own");
    let made = Command::new("sh")
        .args(["-c", &COMPLETE.replace("{cache}", own.to_str().unwrap())])
        .status()
        .unwrap();
    assert!(made.success());
    let given = rootfs(&own);
    assert!(given.status.success(), "{given:?}");
    assert_eq!(
        String::from_utf8_lossy(&given.stdout).trim(),
        own.to_str().unwrap()
    );
    // The other user's, complete and with their own bin/sh, is refused.
    let theirs = sticky.0.join("theirs");
    as_other(&COMPLETE.replace("{cache}", theirs.to_str().unwrap()));
    let given = rootfs(&theirs);
    let said = String::from_utf8_lossy(&given.stderr);
    assert!(
        !given.status.success(),
        "another user's tree was given as root's: {}",
        String::from_utf8_lossy(&given.stdout)
    );
    assert!(said.contains("owned by uid 65534"), "{said}");
    assert_eq!(
        fs::read_to_string(theirs.join("bin/sh")).unwrap(),
        "planted\n"
    );
}

#[test]
fn a_link_at_a_lock_s_name_never_has_root_write_its_target() {
    let sticky = Sticky::new("lock");
    // What root must not write: a file of root's, outside the sticky folder.
    let victim = sticky.0.with_extension("victim");
    fs::write(&victim, "root's own\n").unwrap();
    let cache = sticky.0.join("tree");
    for name in ["tree.lock", "tree.log"] {
        let link = sticky.0.join(name);
        as_other(&format!("ln -s {} {}", victim.display(), link.display()));
    }
    let given = rootfs(&cache);
    let said = String::from_utf8_lossy(&given.stderr);
    let left = fs::read_to_string(&victim).unwrap();
    fs::remove_file(&victim).unwrap();
    assert_eq!(left, "root's own\n", "root wrote through the link: {said}");
    assert!(
        !given.status.success() && said.contains("symbolic link"),
        "{said}"
    );
    // The control: without the links, the same run takes the names as its
    // own (and then fails at the mirror, which cannot answer).
    for name in ["tree.lock", "tree.log"] {
        fs::remove_file(sticky.0.join(name)).unwrap();
    }
    let given = rootfs(&cache);
    let said = String::from_utf8_lossy(&given.stderr);
    assert!(said.contains("debootstrap failed"), "{said}");
    let lock = fs::symlink_metadata(sticky.0.join("tree.lock")).unwrap();
    assert!(lock.is_file(), "the lock made as root's own file");
}

#[test]
fn own_path_makes_what_is_missing_and_refuses_what_is_not_root_s_alone() {
    let sticky = Sticky::new("own");
    let own = |kind: &str, name: &str| {
        Command::new(script("own-path"))
            .arg(kind)
            .arg(sticky.0.join(name))
            .output()
            .unwrap()
    };
    assert!(own("dir", "made").status.success());
    let made = fs::symlink_metadata(sticky.0.join("made")).unwrap();
    assert!(made.is_dir() && made.permissions().mode() & 0o777 == 0o755);
    assert!(own("dir", "made").status.success(), "root's own, again");
    assert!(own("file", "made.lock").status.success());
    assert!(
        fs::symlink_metadata(sticky.0.join("made.lock"))
            .unwrap()
            .is_file()
    );
    as_other(&format!(
        "mkdir {0}/theirs && ln -s /etc {0}/link",
        sticky.0.display()
    ));
    fs::create_dir(sticky.0.join("open")).unwrap();
    fs::set_permissions(sticky.0.join("open"), fs::Permissions::from_mode(0o777)).unwrap();
    for (kind, name, why) in [
        ("dir", "theirs", "owned by uid 65534"),
        ("dir", "link", "symbolic link"),
        ("file", "link", "symbolic link"),
        ("dir", "open", "mode 777"),
        ("dir", "made.lock", "not a directory"),
    ] {
        let output = own(kind, name);
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{kind} {name} taken");
        assert!(said.contains(why), "{kind} {name}: {said}");
    }
}

/// The tests' own locks (common::locked: the machine-wide sync lock in
/// /run/lock or /tmp, the engines' stores) are opened by every user, so
/// made 0666 at fixed names where every user may write: a link another
/// user put at such a name had root make the file it pointed to. It is
/// not followed now; a lock file of root's is taken as before.
#[test]
fn a_link_at_a_test_lock_s_name_is_not_followed() {
    let sticky = Sticky::new("locks");
    let target = sticky.0.with_extension("made-by-root");
    let link = sticky.0.join("eatmydata-test.lock");
    as_other(&format!("ln -s {} {}", target.display(), link.display()));
    let taken = std::panic::catch_unwind(|| {
        drop(crate::common::locked(&link, libc::LOCK_SH));
    });
    let made = fs::symlink_metadata(&target).is_ok();
    let _ = fs::remove_file(&target);
    assert!(!made, "root made the file another user's link named");
    assert!(taken.is_err(), "the link was taken for the lock");
    // The control: a lock at a name of root's own is made and taken.
    let own = sticky.0.join("own.lock");
    drop(crate::common::locked(&own, libc::LOCK_SH));
    assert!(fs::symlink_metadata(&own).unwrap().is_file());
}
