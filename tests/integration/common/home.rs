//! Root's homes for tests (`EATMYDATA_HOME`): folders of root's under
//! `/run`, mode 0755 in a root-owned chain, as the rule for root's home
//! wants them (`src/wrapper/library/mod.rs`), wherever the checkout is
//! (never under it: it may be in `/tmp`); never the machine's
//! `/run/eatmydata` or `/var/lib/eatmydata`.
//!
//! - **Each test process's own**, the default: before `main` (from
//!   `.init_array`, while the process has one thread),
//!   `/run/eatmydata-test/home-PID` is made and `EATMYDATA_HOME` names it
//!   in this process's environment, so that every command, runtime and
//!   engine a test starts inherits it: the library root places, the
//!   account and the containers' report folders all go there. Removed at
//!   exit, and those of test processes that are gone at the next start.
//!   Only as root: a user's run makes nothing.
//! - **A test's own** ([`RootHome`]), for a test that looks at what its
//!   home holds and sets `EATMYDATA_HOME` on its commands itself.
//! - **The runtime registered** with engines ([`registered_runtime`]):
//!   root's copy in the process's home, wherever the checkout is.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::trusted::{remove, sweep};

/// A folder of root's under `/run`, removed on drop.
pub struct RootHome(PathBuf);

impl RootHome {
    pub fn new(label: &str) -> RootHome {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let path = PathBuf::from(format!(
            "/run/eatmydata-test-{label}-{}-{n}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir(&path).expect("make a root home under /run");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        RootHome(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for RootHome {
    fn drop(&mut self) {
        remove(&self.0);
    }
}

/// The runtime a test registers with an engine, as an operator is told
/// to (docs/containers.md): a file of root's in a chain of root's folders.
/// Never one in the checkout: that may sit in a shared folder (`/tmp`,
/// `/var/tmp`, sticky and world-writable) where `configure` rightly
/// refuses to register anything. A copy of the command with the library
/// it was built with beside it (the installed copy it takes first), and
/// `eatmydata-runtime` a link to it there, in `registered/bin/` of this
/// process's home: made once per test process, removed with the home.
pub fn registered_runtime() -> PathBuf {
    static MADE: OnceLock<PathBuf> = OnceLock::new();
    MADE.get_or_init(|| {
        let home = path();
        assert!(
            home.is_dir(),
            "no home of this test process at {} (tests run as root)",
            home.display()
        );
        let bin = home.join("registered/bin");
        fs::create_dir_all(&bin).expect("make the registered runtime's folder");
        for folder in [bin.parent().unwrap(), &bin] {
            fs::set_permissions(folder, fs::Permissions::from_mode(0o755)).unwrap();
        }
        let command = crate::common::command();
        fs::copy(&command, bin.join("eatmydata")).expect("copy the command");
        fs::copy(crate::common::library(), bin.join("libeatmydata.so")).expect("copy the library");
        let link = bin.join("eatmydata-runtime");
        std::os::unix::fs::symlink("eatmydata", &link).expect("link eatmydata-runtime");
        link
    })
    .clone()
}

/// Where the homes of test processes go: root's, in root's `/run`.
pub const PARENT: &str = "/run/eatmydata-test";

/// The variable, as the command reads it.
pub const HOME: &str = "EATMYDATA_HOME";

/// This process's home folder, named by pid.
pub fn path() -> PathBuf {
    Path::new(PARENT).join(format!("home-{}", std::process::id()))
}

// SAFETY (of the attribute): the entry is a plain `extern "C" fn()` with no
// arguments, as the loader calls each entry of `.init_array`.
#[used]
#[unsafe(link_section = ".init_array")]
static MAKE_HOME: extern "C" fn() = make_home;

/// Makes the home and sets the variable, before `main`.
extern "C" fn make_home() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    sweep(Path::new(PARENT), "home-", remove);
    let home = path();
    // Another process removes the parent when it leaves it empty, maybe
    // between our two folders: a few tries. Named even when not made: the
    // command then fails, as root, rather than fall back to the machine's.
    if (0..10).any(|_| make(Path::new(PARENT)) && make(&home)) {
        // SAFETY: registers a plain function with no arguments.
        unsafe { libc::atexit(remove_home) };
    }
    // SAFETY: before main, from .init_array: no other thread exists yet
    // to read the environment while it changes.
    unsafe { std::env::set_var(HOME, &home) };
}

/// `folder`, root's, mode 0755 (whatever the umask), made when missing.
fn make(folder: &Path) -> bool {
    let _ = fs::create_dir(folder);
    fs::set_permissions(folder, fs::Permissions::from_mode(0o755)).is_ok()
}

/// Removes the home at exit, and the folder of homes when it is empty.
extern "C" fn remove_home() {
    remove(&path());
    let _ = fs::remove_dir(PARENT);
}

/// The machine's own places for root's home and the account, which no
/// test may touch.
pub const MACHINE: [&str; 2] = ["/run/eatmydata", "/var/lib/eatmydata"];

/// What a folder of the machine's holds now: every path under it with its
/// kind, size and modification time, or that it is missing; the guard test
/// compares two of these.
pub fn snapshot(folder: &str) -> Vec<String> {
    let mut seen = Vec::new();
    let mut todo = vec![PathBuf::from(folder)];
    while let Some(path) = todo.pop() {
        let Ok(meta) = fs::symlink_metadata(&path) else {
            seen.push(format!("{} missing", path.display()));
            continue;
        };
        let modified = meta.modified().ok();
        seen.push(format!(
            "{} {:?} {} {modified:?}",
            path.display(),
            meta.file_type(),
            meta.len()
        ));
        if meta.is_dir()
            && let Ok(entries) = fs::read_dir(&path)
        {
            todo.extend(entries.flatten().map(|entry| entry.path()));
        }
    }
    seen.sort();
    seen
}
