//! Rootless engines run the runtime as uid 0 of a user namespace, where
//! `/tmp`, `/var/tmp` and `/dev/shm` belong to the overflow uid and no
//! environment reaches it (conmon passes none). There the command finds,
//! or makes, the user's own placed copy beside itself
//! (`~/.local/lib/eatmydata/`), and writes nothing in a shared folder.
//!
//! The user is a uid of the test's own with a home the test makes, as a
//! user's `~/.local/bin` holds a copied single file; the namespace is
//! `unshare --user --map-root-user` run as that user, with `env -i`.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, chown};
use std::path::{Path, PathBuf};

use super::{fsyncs_alone, lonely, placed_for};
use crate::common::{Outcome, Run, TempDir, probe};
use crate::containers::daemon::RunDir;

/// The user of this test: no other test runs as it, so what it owns in
/// `/tmp` is this test's doing.
const ROOTLESS: u32 = 4243;

/// A home of `ROOTLESS`'s under `dir`, with the command in `~/.local/bin`.
fn home_with_the_command(dir: &TempDir) -> (PathBuf, PathBuf) {
    let home = dir.join("home");
    let bin = home.join(".local/bin");
    fs::create_dir_all(&bin).unwrap();
    let eatmydata = bin.join("eatmydata");
    fs::copy(lonely(dir), &eatmydata).unwrap();
    for path in [&home, &home.join(".local"), &bin, &eatmydata] {
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
        chown(path, Some(ROOTLESS), Some(ROOTLESS)).unwrap();
    }
    (home, eatmydata)
}

/// `ARGS` as `ROOTLESS`, as uid 0 of a user namespace of its own, with no
/// environment at all.
fn in_user_namespace(args: &[&std::ffi::OsStr]) -> Run {
    Run::new("setpriv")
        .args([
            format!("--reuid={ROOTLESS}"),
            format!("--regid={ROOTLESS}"),
            "--clear-groups".into(),
        ])
        .args(["unshare", "--user", "--map-root-user", "env", "-i"])
        .args(args)
}

/// What `ROOTLESS` owns in the shared temporary folders.
fn theirs_in_shared_folders() -> Vec<PathBuf> {
    ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .flat_map(|place| fs::read_dir(place).unwrap())
        .filter_map(Result::ok)
        .filter(|entry| fs::symlink_metadata(entry.path()).is_ok_and(|meta| meta.uid() == ROOTLESS))
        .map(|entry| entry.path())
        .collect()
}

fn succeeded(outcome: Outcome) -> Outcome {
    outcome.success()
}

#[test]
fn uid_0_of_a_user_namespace_uses_the_users_placed_copy_and_no_shared_folder() {
    let dir = TempDir::trusted("rootless-unshare");
    let (home, eatmydata) = home_with_the_command(&dir);
    let placed = placed_for(&eatmydata);
    assert!(placed.starts_with(home.join(".local/lib/eatmydata")));
    assert_eq!(theirs_in_shared_folders(), Vec::<PathBuf>::new());

    // The first run places the copy; it is the user's on the host.
    let printed =
        succeeded(in_user_namespace(&[eatmydata.as_os_str(), "--print-library".as_ref()]).run());
    assert_eq!(printed.stdout(), format!("{}\n", placed.display()));
    let meta = fs::metadata(&placed).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o7777), (ROOTLESS, 0o644));

    // The next finds it, and the syncs are eaten (beside the control).
    let data = dir.join("eaten");
    fs::write(&data, "").unwrap();
    chown(&data, Some(ROOTLESS), Some(ROOTLESS)).unwrap();
    fsyncs_alone(&dir.join("plain"));
    let sync_calls = probe("sync_calls", &[]);
    let eaten = in_user_namespace(&[
        eatmydata.as_os_str(),
        "-v".as_ref(),
        sync_calls.as_os_str(),
        data.as_os_str(),
    ])
    .trace(&["fsync"])
    .run();
    let eaten = succeeded(eaten);
    assert!(eaten.calls_of("fsync").is_empty(), "{:?}", eaten.calls);
    assert!(
        eaten.stderr().ends_with(&format!(
            "with {} preloaded (the copy placed beside eatmydata)\n",
            placed.display()
        )),
        "{}",
        eaten.stderr()
    );
    assert_eq!(fs::metadata(&placed).unwrap().ino(), meta.ino());
    assert_eq!(theirs_in_shared_folders(), Vec::<PathBuf>::new());

    // The same user outside the namespace uses their placed copy too.
    let outside = succeeded(
        Run::new("setpriv")
            .args([
                format!("--reuid={ROOTLESS}"),
                format!("--regid={ROOTLESS}"),
                "--clear-groups".into(),
            ])
            .arg(&eatmydata)
            .arg("--print-library")
            .run(),
    );
    assert_eq!(outside.stdout(), format!("{}\n", placed.display()));
    assert_eq!(theirs_in_shared_folders(), Vec::<PathBuf>::new());
}

/// The user of the podman test, its name, and the ids its namespace maps.
const PODMAN_USER: u32 = 4245;
const PODMAN_NAME: &str = "eatmydata-rootless";
const SUBIDS: &str = "400000:65536";

/// What rootless podman needs of the machine, in a mount namespace of the
/// test's own so that the machine's files stay as they are: the user in
/// `/etc/passwd` and `/etc/group`, its ranges in `/etc/subuid` and
/// `/etc/subgid` (which the setuid `newuidmap` reads).
fn podman_etc(dir: &TempDir, home: &Path) -> String {
    let etc = dir.join("etc");
    fs::create_dir_all(&etc).unwrap();
    let user = format!(
        "{PODMAN_NAME}:x:{PODMAN_USER}:{PODMAN_USER}::{}:/bin/sh\n",
        home.display()
    );
    let group = format!("{PODMAN_NAME}:x:{PODMAN_USER}:\n");
    let ids = format!("{PODMAN_NAME}:{SUBIDS}\n");
    let mut binds = String::new();
    for (name, line) in [
        ("passwd", user),
        ("group", group),
        ("subuid", ids.clone()),
        ("subgid", ids),
    ] {
        let theirs = fs::read_to_string(Path::new("/etc").join(name)).unwrap_or_default();
        fs::write(etc.join(name), theirs + &line).unwrap();
        fs::set_permissions(etc.join(name), fs::Permissions::from_mode(0o644)).unwrap();
        // /etc/subuid may be missing: the bind needs a file to cover.
        binds.push_str(&format!(
            "[ -e /etc/{name} ] || mount -t tmpfs tmpfs /etc 2>/dev/null; \
             mount --bind '{}' /etc/{name}\n",
            etc.join(name).display()
        ));
    }
    binds
}

/// An image of the host's `sh` and `dd` and the libraries they need, as a
/// tar archive `podman import` takes.
fn tiny_image(dir: &TempDir) -> PathBuf {
    let root = dir.join("rootfs");
    fs::create_dir_all(root.join("bin")).unwrap();
    fs::create_dir_all(root.join("data")).unwrap();
    for program in ["/bin/sh", "/bin/dd"] {
        let real = fs::canonicalize(program).unwrap();
        fs::copy(&real, root.join(program.trim_start_matches('/'))).unwrap();
        let ldd = std::process::Command::new("ldd")
            .arg(&real)
            .output()
            .unwrap();
        for lib in String::from_utf8_lossy(&ldd.stdout)
            .split_whitespace()
            .filter(|word| word.starts_with('/'))
        {
            let into = root.join(lib.trim_start_matches('/'));
            fs::create_dir_all(into.parent().unwrap()).unwrap();
            fs::copy(lib, &into).unwrap();
        }
    }
    let tar = dir.join("rootfs.tar");
    let status = std::process::Command::new("tar")
        .arg("-C")
        .arg(&root)
        .arg("-cf")
        .arg(&tar)
        .arg(".")
        .status()
        .unwrap();
    assert!(status.success());
    chown(&tar, Some(PODMAN_USER), Some(PODMAN_USER)).unwrap();
    tar
}

/// What the container runs: 200 synchronous writes, then a line.
const WORKLOAD: &str = "dd if=/dev/zero of=/data/f bs=4k count=200 oflag=dsync status=none; \
                        echo dd: $?";

#[test]
fn rootless_podman_runs_the_runtime_as_typed_and_its_syncs_are_eaten() {
    // One run at a time on the machine, whatever the checkout: the user's
    // lock in /dev/shm and its ids are the machine's.
    let folder = ["/run/lock", "/tmp"]
        .into_iter()
        .find(|folder| Path::new(folder).is_dir())
        .unwrap();
    let lock = Path::new(folder).join("eatmydata-rootless-podman");
    let _one = crate::common::locked(&lock, libc::LOCK_EX);
    let dir = TempDir::trusted("rootless-podman");
    let home = dir.join("home");
    let bin = home.join(".local/bin");
    fs::create_dir_all(&bin).unwrap();
    fs::copy(lonely(&dir), bin.join("eatmydata")).unwrap();
    std::os::unix::fs::symlink("eatmydata", bin.join("eatmydata-runtime")).unwrap();
    // The user's XDG_RUNTIME_DIR, as short as a login's /run/user/UID:
    // podman refuses a run root (its containers/ folder) over 50
    // characters, and so did the clean-up that conmon runs as a container
    // ends, which then left `podman run --rm` to wait 20 s for an exit
    // code before reading it itself.
    let run = RunDir::new("rl");
    let run_dir = run.path();
    fs::set_permissions(run_dir, fs::Permissions::from_mode(0o700)).unwrap();
    let status = std::process::Command::new("chown")
        .args(["-R", "-h", &format!("{PODMAN_USER}:{PODMAN_USER}")])
        .arg(&home)
        .arg(run_dir)
        .status()
        .unwrap();
    assert!(status.success());
    let binds = podman_etc(&dir, &home);
    let image = tiny_image(&dir);
    let disk = crate::loopfs::LoopFs::new("rootless-podman", 64);
    let data = disk.join("rootless");
    fs::create_dir_all(&data).unwrap();
    chown(&data, Some(PODMAN_USER), Some(PODMAN_USER)).unwrap();
    let runc = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v runc"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();

    // As the user, with only what a login would give: podman as typed.
    let as_user = |podman: &str| {
        let script = format!(
            "set -e
{binds}
# Shared again, as podman wants /, in peer groups of this namespace alone.
mount --make-rshared /
exec setpriv --reuid={PODMAN_USER} --regid={PODMAN_USER} --clear-groups \
  env -i HOME='{home}' XDG_RUNTIME_DIR='{run}' PATH=/usr/bin:/bin USER={PODMAN_NAME} \
  sh -c 'cd; status=0; {podman} || status=$?
    kill $(cat \"$XDG_RUNTIME_DIR/libpod/tmp/pause.pid\" 2>/dev/null) 2>/dev/null
    rm -f /dev/shm/libpod_rootless_lock_{PODMAN_USER}; exit $status'",
            home = home.display(),
            run = run_dir.display(),
        );
        Run::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", &script])
            .run()
    };
    let podman = "podman --storage-driver vfs";
    succeeded(as_user(&format!(
        "{podman} import -q {} eatmydata-tiny >/dev/null",
        image.display()
    )));
    let container = |runtime: &str| {
        format!(
            "{podman} run --rm --network=none --runtime {runtime} -v {}:/data \
             eatmydata-tiny /bin/sh -c \"{WORKLOAD}\"",
            data.display()
        )
    };
    let mut control = None;
    let control_flushes = disk.flushes_during(|| control = Some(as_user(&container(runc.trim()))));
    // The floor: dd's 200 blocks written without O_DSYNC.
    let floor = crate::common::floor_writing(&disk, "floor", 200 * 4096);
    let mut eaten = None;
    let eaten_flushes = disk.flushes_during(|| {
        eaten = Some(as_user(&container("~/.local/bin/eatmydata-runtime")));
    });
    let (control, eaten) = (succeeded(control.unwrap()), eaten.unwrap());
    eprintln!(
        "rootless podman: control {control_flushes} flushes, runtime {eaten_flushes} flushes"
    );
    assert_eq!(
        (eaten.output.status.code(), eaten.stdout(), eaten.stderr()),
        (Some(0), control.stdout(), control.stderr())
    );
    assert_eq!(control.stdout(), "dd: 0\n");
    crate::common::Flushes {
        control: control_flushes,
        floor,
        eaten: eaten_flushes,
    }
    .assert_eaten(200, "rootless podman");
    // The runtime placed the user's copy, and nothing in a shared folder.
    let placed = placed_for(&bin.join("eatmydata"));
    assert_eq!(fs::metadata(&placed).unwrap().uid(), PODMAN_USER);
    for place in ["/tmp", "/var/tmp", "/dev/shm"] {
        assert!(
            !Path::new(place)
                .join(format!("eatmydata-{PODMAN_USER}"))
                .exists()
        );
    }
}
