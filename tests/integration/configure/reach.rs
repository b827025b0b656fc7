//! The README's first minute: `cargo install`, then `sudo "$(command -v
//! eatmydata)" --runtime configure docker`. The command is in a user's
//! `~/.cargo/bin`, where root must not run it from, so `configure` copies
//! it to `/usr/local/eatmydata/bin/`; the later verbs are typed by name
//! (`sudo eatmydata-runtime ...`), which sudo's `secure_path` must find.
//! Run in a mount namespace whose `/usr/local` and `/run` are empty
//! tmpfs, so that the machine's own stay untouched (and no dockerd's pid
//! file is found to signal), with sudo's PATH.

use std::fs;
use std::os::unix::fs::{PermissionsExt, chown};
use std::process::Command;

use crate::common::{TempDir, command};

/// sudo's `secure_path` on Debian: what `sudo NAME` searches.
const SUDO_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Before: no link, and `eatmydata-runtime` typed by name was "not found";
/// `--remove` left the copy and `"default-runtime": "runc"` unsaid.
#[test]
fn a_cargo_install_registered_by_root_is_reached_by_name_and_removal_says_what_stays() {
    let dir = TempDir::new("configure-reach");
    let bin = dir.join("home/u/.cargo/bin");
    fs::create_dir_all(&bin).unwrap();
    fs::copy(command(), bin.join("eatmydata")).unwrap();
    for path in [&dir.join("home/u"), &dir.join("home/u/.cargo"), &bin] {
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
        chown(path, Some(65534), Some(65534)).unwrap();
    }
    chown(bin.join("eatmydata"), Some(65534), Some(65534)).unwrap();
    let config = dir.join("daemon.json");
    let theirs = "{\n    \"log-driver\": \"journald\"\n}\n";
    fs::write(&config, theirs).unwrap();
    let script = format!(
        r#"set -e
mount -t tmpfs -o mode=755 tmpfs /usr/local
mkdir -m 755 /usr/local/bin
mount -t tmpfs -o mode=755 tmpfs /run
echo "before: $(command -v eatmydata-runtime || echo none)"
{bin}/eatmydata --runtime configure docker --default --config {config} --systemd-dir {sd}
echo "after: $(command -v eatmydata-runtime)"
eatmydata-runtime configure docker --remove --config {config} --systemd-dir {sd}
echo "left: $(readlink /usr/local/bin/eatmydata-runtime)"
"#,
        bin = bin.display(),
        config = config.display(),
        sd = dir.join("systemd").display(),
    );
    let output = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "/bin/sh",
            "-c",
            &script,
        ])
        .env_remove("EATMYDATA_HOME")
        .env("PATH", SUDO_PATH)
        .output()
        .expect("run unshare");
    let said = String::from_utf8_lossy(&output.stdout);
    let all = format!("{said}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{all}");
    // The control: nothing of that name on sudo's PATH before.
    assert!(said.contains("before: none\n"), "{all}");
    assert!(
        said.contains(
            "Made /usr/local/bin/eatmydata-runtime, a link to \
             /usr/local/eatmydata/bin/eatmydata-runtime"
        ),
        "{all}"
    );
    assert!(
        said.contains("after: /usr/local/bin/eatmydata-runtime\n"),
        "{all}"
    );
    assert!(
        said.contains(&format!(
            "Left \"default-runtime\": \"runc\" in {}",
            config.display()
        )),
        "{all}"
    );
    assert!(
        said.contains("Left /usr/local/eatmydata and its link /usr/local/bin/eatmydata-runtime (root's copy of this command and its library"),
        "{all}"
    );
    assert!(!said.contains("The library stays at"), "said twice: {all}");
    assert!(
        said.contains("left: /usr/local/eatmydata/bin/eatmydata-runtime\n"),
        "{all}"
    );
    assert_eq!(
        fs::read_to_string(&config).unwrap(),
        theirs.replace(
            "\"journald\"\n",
            "\"journald\",\n    \"default-runtime\": \"runc\"\n"
        ),
        "{all}"
    );
}
