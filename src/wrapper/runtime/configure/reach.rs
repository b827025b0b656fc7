//! How root reaches root's copy of this command by name afterwards. A
//! user who ran `cargo install` and then `sudo "$(command -v eatmydata)"
//! --runtime configure docker` has the command copied to
//! `/usr/local/eatmydata/bin/`, which is on no one's PATH: so `configure`
//! links `/usr/local/bin/eatmydata-runtime` (on root's PATH and sudo's
//! `secure_path`) to the copy, where nothing is at that name, and says
//! so; else it says the copy's full path for the later verbs (`report`,
//! `--remove`). `--remove` says what stays of it, and why.
//!
//! Only this one name: `eatmydata` itself is Debian's original's too.

use std::fs;
use std::path::{Path, PathBuf};

use super::RUNTIME_FILE;

/// Where an operator's typed commands are found: root's PATH and sudo's.
pub const ON_PATH: &str = "/usr/local/bin";

/// The link in [`ON_PATH`], and the copy it names.
fn link() -> PathBuf {
    Path::new(ON_PATH).join(RUNTIME_FILE)
}

/// Whether `link` is our link to `copy`.
fn ours(link: &Path, copy: &Path) -> bool {
    fs::read_link(link).is_ok_and(|target| target == copy)
}

/// After `copy` (the copy's `eatmydata-runtime`, root's) was made in
/// `prefix`: the link that makes it reachable by name, when `prefix` is
/// root's usual one and the name is free; else the full path, said.
pub fn link_copy(copy: &Path, usual: bool, dry_run: bool) {
    let link = link();
    let later = |why: &str| {
        say!(
            "Later verbs take its full path ({why}): sudo {} report, sudo {} \
             configure ENGINE --remove.",
            copy.display(),
            copy.display()
        );
    };
    if !usual {
        return later("EATMYDATA_HOME names root's place for it");
    }
    if ours(&link, copy) {
        return;
    }
    if link.symlink_metadata().is_ok() {
        return later(&format!("{} is there already, not ours", link.display()));
    }
    if let Err(why) = crate::library::safe_folder(Path::new(ON_PATH)) {
        return later(&format!("not linked into {ON_PATH}: {why}"));
    }
    if dry_run {
        say!(
            "Would make {}, a link to {}.",
            link.display(),
            copy.display()
        );
        return;
    }
    match std::os::unix::fs::symlink(copy, &link) {
        Ok(()) => say!(
            "Made {}, a link to {}: `sudo {RUNTIME_FILE} report` and \
             `sudo {RUNTIME_FILE} configure ENGINE --remove` find it.",
            link.display(),
            copy.display()
        ),
        Err(error) => later(&format!(
            "cannot make {}: {}",
            link.display(),
            crate::error::plain(&error)
        )),
    }
}

/// At `--remove`: what stays of root's copy in `prefix` (the library
/// placed beside it included) and its link, and why; whether there was a
/// copy to say so of.
pub fn left(prefix: &Path) -> bool {
    let copy = prefix.join("bin").join(RUNTIME_FILE);
    if copy.symlink_metadata().is_err() {
        return false;
    }
    let link = link();
    let linked = ours(&link, &copy);
    let (what, rm) = match linked {
        true => (
            format!("{} and its link {}", prefix.display(), link.display()),
            format!(
                "sudo rm {}; sudo rm -r {}",
                link.display(),
                prefix.display()
            ),
        ),
        false => (
            prefix.display().to_string(),
            format!("sudo rm -r {}", prefix.display()),
        ),
    };
    say!(
        "Left {what} (root's copy of this command and its library, which configure \
         made): another engine's registration may still run it, and it changes nothing \
         on its own. Once none does: {rm} (or `eatmydata-runtime uninstall` if the node \
         installer made it)."
    );
    true
}
