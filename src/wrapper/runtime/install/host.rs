//! The machine's root as the installer sees it: `/`, or the host's root
//! mounted into the installer's container (`/host`). A path of the host's
//! is joined under it; a link on the way is refused rather than followed,
//! since it would be resolved in the installer's view, not the host's.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Component, Path, PathBuf};

use super::Error;

pub struct Host {
    root: PathBuf,
}

impl Host {
    pub fn new(root: &Path) -> Result<Host, Error> {
        let meta = fs::metadata(root).map_err(Error::io("open the host's root", root))?;
        if !meta.is_dir() {
            return Err(Error::Usage(format!(
                "--host-root {} is not a folder",
                root.display()
            )));
        }
        Ok(Host { root: root.into() })
    }

    /// The host's `/`, as seen here.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path`, a host's absolute path, as seen here.
    pub fn at(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }

    /// The host's `path` as seen here, every folder on the way from the
    /// root checked to be a folder and not a link (those missing count as
    /// fine: nothing can be followed through them).
    pub fn no_link(&self, path: &str) -> Result<PathBuf, Error> {
        let mut here = self.root.clone();
        for part in Path::new(path).components() {
            let Component::Normal(name) = part else {
                if part == Component::RootDir {
                    continue;
                }
                return Err(Error::Engine(format!(
                    "{path} is not a plain absolute path"
                )));
            };
            here.push(name);
            match fs::symlink_metadata(&here) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(Error::Engine(format!(
                        "{} is a link; the installer follows none on the host",
                        here.display()
                    )));
                }
                Ok(_) => {}
                Err(error) if error.kind() == io::ErrorKind::NotFound => {}
                Err(error) => return Err(Error::io("look at", &here)(error)),
            }
        }
        Ok(here)
    }

    /// A folder of ours at the host's `path`, made (0755) with any folder
    /// missing above it; every one on the way a real folder, and ours
    /// owned by root or us and writable by no one else.
    pub fn own_folder(&self, path: &str) -> Result<PathBuf, Error> {
        let folder = self.no_link(path)?;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(&folder)
            .map_err(Error::io("make the folder", &folder))?;
        let folder = self.no_link(path)?;
        let meta = fs::symlink_metadata(&folder).map_err(Error::io("look at", &folder))?;
        // SAFETY: geteuid cannot fail.
        let us = unsafe { libc::geteuid() };
        if !meta.is_dir() || (meta.uid() != 0 && meta.uid() != us) || meta.mode() & 0o022 != 0 {
            return Err(Error::Engine(format!(
                "{} is not a folder only root may write; left alone",
                folder.display()
            )));
        }
        Ok(folder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_under_the_root_and_refuses_links_on_the_way() {
        let dir = std::env::temp_dir().join(format!("eatmydata-host-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("etc")).unwrap();
        std::os::unix::fs::symlink("/etc", dir.join("etc/containerd")).unwrap();
        let host = Host::new(&dir).unwrap();
        assert_eq!(host.at("/etc/crio"), dir.join("etc/crio"));
        assert_eq!(host.no_link("/etc/crio/x").unwrap(), dir.join("etc/crio/x"));
        assert!(host.no_link("/etc/containerd/config.toml").is_err());
        assert!(host.no_link("/etc/../x").is_err());
        let ours = host.own_folder("/var/lib/eatmydata").unwrap();
        assert!(ours.is_dir());
        assert!(host.own_folder("/etc/containerd/x").is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
