//! Root's home for a test (`EATMYDATA_HOME`): a folder of root's under
//! `/run`, mode 0755 in a root-owned chain, as the rule for root wants it,
//! of the test's own and removed after; never the machine's
//! `/run/eatmydata` or `/var/lib/eatmydata`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

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
        let _ = fs::remove_dir_all(&self.0);
    }
}
