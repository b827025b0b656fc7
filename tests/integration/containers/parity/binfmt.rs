//! qemu-aarch64 for the arm64 image, as a multi-platform CI machine has
//! it: registered with binfmt_misc with the F flag (the interpreter opened
//! at registration, so it runs inside any container's root), the static
//! qemu-user-static build. What the test mounted or registered is taken
//! back when dropped; an entry already there is used as it is.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const MISC: &str = "/proc/sys/fs/binfmt_misc";
/// The entry this test registers.
const NAME: &str = "eatmydata-parity-aarch64";
/// An aarch64 ELF executable's header, and which of its bits count (as
/// qemu's own `/usr/lib/binfmt.d/qemu-aarch64.conf` says).
const MAGIC: &str =
    r"\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00";
const MASK: &str =
    r"\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff";
/// The same header as binfmt_misc shows it back.
const SHOWN: &str = "magic 7f454c460201010000000000000000000200b700";
const QEMU: &str = "/usr/bin/qemu-aarch64-static";

pub struct Aarch64 {
    mounted: bool,
    registered: Option<PathBuf>,
}

impl Aarch64 {
    pub fn registered() -> Aarch64 {
        let mut made = Aarch64 {
            mounted: false,
            registered: None,
        };
        if !Path::new(MISC).join("register").exists() {
            let status = Command::new("mount")
                .args(["-t", "binfmt_misc", "binfmt_misc", MISC])
                .status()
                .expect("run mount");
            assert!(status.success(), "mount binfmt_misc on {MISC}");
            made.mounted = true;
        }
        let ours = Path::new(MISC).join(NAME);
        if usable().is_some_and(|entry| entry != ours) {
            return made;
        }
        if !ours.exists() {
            assert!(
                Path::new(QEMU).is_file(),
                "{QEMU} is missing (qemu-user-static, scripts/setup-test-deps)"
            );
            let line = format!(":{NAME}:M::{MAGIC}:{MASK}:{QEMU}:F");
            fs::write(Path::new(MISC).join("register"), line)
                .expect("register qemu-aarch64 with binfmt_misc");
        }
        made.registered = Some(ours);
        made
    }
}

/// An enabled entry that runs aarch64 programs with the F flag.
fn usable() -> Option<PathBuf> {
    let entries = fs::read_dir(MISC).ok()?;
    entries.flatten().map(|entry| entry.path()).find(|path| {
        let text = fs::read_to_string(path).unwrap_or_default();
        text.starts_with("enabled")
            && text.lines().any(|line| line == SHOWN)
            && text
                .lines()
                .any(|line| line.starts_with("flags: ") && line.contains('F'))
    })
}

impl Drop for Aarch64 {
    fn drop(&mut self) {
        if let Some(entry) = &self.registered {
            let _ = fs::write(entry, "-1");
        }
        if self.mounted {
            let _ = Command::new("umount").arg(MISC).status();
        }
    }
}
