//! An installed copy of the library: one that came with the command
//! (`scripts/install.sh`, the Debian packages, a build tree), found beside
//! its real path or in its prefix.

use std::path::{Path, PathBuf};

use super::FILE_NAME;

/// The file Debian's `libeatmydata1` package installs (its SONAME).
const DEBIAN_FILE_NAME: &str = "libeatmydata.so.1";

/// Debian's multiarch folder for the glibc library of this architecture
/// (the library is a glibc one even when this command is static).
const MULTIARCH: &str = if cfg!(target_arch = "x86_64") {
    "x86_64-linux-gnu"
} else if cfg!(target_arch = "aarch64") {
    "aarch64-linux-gnu"
} else if cfg!(target_arch = "x86") {
    "i386-linux-gnu"
} else if cfg!(target_arch = "arm") {
    "arm-linux-gnueabihf"
} else if cfg!(target_arch = "riscv64") {
    "riscv64-linux-gnu"
} else if cfg!(target_arch = "s390x") {
    "s390x-linux-gnu"
} else {
    // Not a Debian architecture we build for: the folder does not exist.
    "unknown-linux-gnu"
};

/// The places to look, given the folder holding this program's real path.
pub fn candidates(exe_dir: &Path) -> Vec<PathBuf> {
    let mut places = vec![exe_dir.join(FILE_NAME)];
    if let Some(prefix) = exe_dir.parent() {
        places.push(prefix.join("lib/eatmydata").join(FILE_NAME));
        places.push(prefix.join("lib").join(FILE_NAME));
        places.push(prefix.join("lib").join(MULTIARCH).join(DEBIAN_FILE_NAME));
    }
    places
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_beside_then_in_the_install_layout() {
        let places = candidates(Path::new("/opt/emd/bin"));
        assert_eq!(
            places,
            [
                PathBuf::from("/opt/emd/bin/libeatmydata.so"),
                PathBuf::from("/opt/emd/lib/eatmydata/libeatmydata.so"),
                PathBuf::from("/opt/emd/lib/libeatmydata.so"),
                PathBuf::from(format!("/opt/emd/lib/{MULTIARCH}/libeatmydata.so.1")),
            ]
        );
        assert_eq!(
            candidates(Path::new("/usr/bin")).last(),
            Some(&PathBuf::from(format!(
                "/usr/lib/{MULTIARCH}/libeatmydata.so.1"
            )))
        );
    }
}
