//! Our Debian packages on a real Debian 12: a fresh bookworm tree (made once
//! by `scripts/debian-rootfs`, with Debian's own eatmydata and libeatmydata1
//! installed) for each test, our packages put in with `dpkg -i` inside a
//! chroot, and the tools that use eatmydata today run there as they would.
//! Needs root, debootstrap and, the first time, Debian's mirror.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::common::TempDir;
use crate::loopfs::LoopFs;

mod packages; // dpkg -i over Debian's, again, held, half-configured; remove and purge
mod recipes; // apt-eatmydata-action, a command prefix, LD_PRELOAD by bare name, mmdebstrap's hook

/// Debian's own version of both packages in bookworm.
const DEBIANS_COMMAND: &str = "130-2";
const DEBIANS_LIBRARY: &str = "130-2+b1";

/// Debian's multiarch library folder on this machine's architecture.
pub const LIBDIR: &str = if cfg!(target_arch = "aarch64") {
    "/usr/lib/aarch64-linux-gnu"
} else {
    "/usr/lib/x86_64-linux-gnu"
};

/// The two packages `scripts/package-deb` builds, and their version.
pub struct Packages {
    pub command: PathBuf,
    pub library: PathBuf,
    pub version: String,
}

/// Our packages, built once per test run (`common::once_per_run`; the
/// script takes a lock too), the paths it printed kept for the run's
/// other processes.
pub fn packages() -> &'static Packages {
    static BUILT: OnceLock<Packages> = OnceLock::new();
    BUILT.get_or_init(|| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR"));
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
        fs::create_dir_all(tmp).expect("make the tests' folder");
        let printed = tmp.join("packages.out");
        crate::common::once_per_run(&tmp.join("packages.run"), || {
            let output = Command::new(source.join("scripts/package-deb"))
                .output()
                .expect("run scripts/package-deb");
            assert!(
                output.status.success(),
                "scripts/package-deb: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            fs::write(&printed, &output.stdout).expect("keep what package-deb printed");
        });
        let stdout = fs::read_to_string(&printed).expect("what package-deb printed");
        let built = |name: &str| {
            stdout
                .lines()
                .find(|line| line.contains(&format!("/{name}_")))
                .map(|line| source.join(line))
                .unwrap_or_else(|| panic!("package-deb built no {name}: {stdout}"))
        };
        let command = built("eatmydata");
        let name = command.file_name().unwrap().to_string_lossy().into_owned();
        let version = name
            .split('_')
            .nth(1)
            .expect("name_version_arch.deb")
            .to_owned();
        Packages {
            command,
            library: built("libeatmydata1"),
            version,
        }
    })
}

/// A bookworm tree of a test's own, with our packages' files in its `/tmp`
/// (as `/tmp/eatmydata.deb` and `/tmp/libeatmydata1.deb`).
pub struct Tree {
    root: PathBuf,
    // Removed with the tree (or unmounted, for a loop device's).
    _scratch: Option<TempDir>,
}

impl Tree {
    /// A fresh tree in a scratch folder.
    pub fn fresh(label: &str) -> Tree {
        let scratch = TempDir::new(label);
        let root = scratch.join("root");
        Tree::lay_out(&root);
        Tree {
            root,
            _scratch: Some(scratch),
        }
    }

    /// A fresh tree on a loop device's file system, to count its flushes.
    pub fn on(fs: &LoopFs) -> Tree {
        let root = fs.join("root");
        Tree::lay_out(&root);
        Tree {
            root,
            _scratch: None,
        }
    }

    fn lay_out(root: &Path) {
        let packages = packages();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/debian-rootfs");
        let output = Command::new(script)
            .args(["--include", "eatmydata"])
            .arg(root)
            .output()
            .expect("run scripts/debian-rootfs");
        assert!(
            output.status.success(),
            "scripts/debian-rootfs: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        fs::copy(&packages.command, root.join("tmp/eatmydata.deb")).unwrap();
        fs::copy(&packages.library, root.join("tmp/libeatmydata1.deb")).unwrap();
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Runs `script` with `sh -e` inside the tree, in a plain environment.
    pub fn sh(&self, script: &str) -> Output {
        Command::new("chroot")
            .arg(&self.root)
            .args(["/bin/sh", "-ec", script])
            .env_clear()
            .env(
                "PATH",
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            )
            .env("LC_ALL", "C")
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output()
            .expect("run chroot")
    }

    /// Runs `script` as [`Tree::sh`] does; it must succeed. Its stdout.
    pub fn ok(&self, script: &str) -> String {
        let output = self.sh(script);
        assert!(
            output.status.success(),
            "in the tree, `{script}` failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// `package`'s status and version, as dpkg-query reports them
    /// (`install ok installed 130-2`), or None when dpkg does not know it.
    pub fn state(&self, package: &str) -> Option<String> {
        let output = self.sh(&format!(
            "dpkg-query -W -f='${{db:Status-Abbrev}}${{Version}}' {package}"
        ));
        let state = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        (output.status.success() && !state.is_empty()).then_some(state)
    }

    /// Installs our two packages with `dpkg -i`.
    pub fn install_ours(&self) -> String {
        self.ok("dpkg -i /tmp/eatmydata.deb /tmp/libeatmydata1.deb")
    }
}
