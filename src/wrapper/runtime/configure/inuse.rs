//! Which containers were made with the runtime: dockerd and podman start
//! a stopped one again with the runtime of the name it was made with, so
//! a removal keeps the name while any is left. dockerd keeps each
//! container's settings in `DATA-ROOT/containers/ID/` (`hostconfig.json`'s
//! `Runtime`, `config.v2.json`'s `Name`): every file is opened without
//! following a link and read bounded. podman is asked (`podman container
//! inspect`), as the user running `configure`.

use std::ffi::CString;
use std::fs::{self, File};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use super::file;

/// What dockerd's `containers/ID/` folders may hold that we read: a
/// container's two settings files are a few kilobytes.
const MOST: u64 = 1 << 20;

/// A container made with the runtime.
#[derive(Debug, PartialEq)]
pub struct Made {
    pub id: String,
    pub name: Option<String>,
}

impl Made {
    /// `0123456789ab (/name)`, as `docker ps` shows a container.
    pub fn shown(&self) -> String {
        let id = &self.id[..self.id.len().min(12)];
        match &self.name {
            Some(name) => format!("{id} ({})", name.trim_start_matches('/')),
            None => id.to_owned(),
        }
    }
}

/// The containers under `data_root` whose runtime is `runtime`; none when
/// dockerd has no `containers` folder there.
pub fn made_with(data_root: &Path, runtime: &str) -> io::Result<Vec<Made>> {
    let root = match File::open(data_root) {
        Ok(root) => root,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let containers = match open_at(&root, "containers", libc::O_DIRECTORY) {
        Ok(containers) => containers,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    // The folder we opened, whatever its path now names.
    let listed = format!("/proc/self/fd/{}", containers.as_raw_fd());
    let mut made = Vec::new();
    for entry in fs::read_dir(listed)? {
        let id = entry?.file_name().to_string_lossy().into_owned();
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let Ok(folder) = open_at(&containers, &id, libc::O_DIRECTORY) else {
            continue;
        };
        let Some(settings) = json_at(&folder, "hostconfig.json") else {
            continue;
        };
        if settings["Runtime"].as_str() != Some(runtime) {
            continue;
        }
        let name = json_at(&folder, "config.v2.json")
            .and_then(|config| config["Name"].as_str().map(str::to_owned));
        made.push(Made { id, name });
    }
    made.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
    Ok(made)
}

/// podman's containers whose runtime is `runtime`; none when there is no
/// podman.
pub fn podman_made_with(runtime: &str) -> io::Result<Vec<Made>> {
    let podman = |args: &[&str]| -> io::Result<String> {
        let output = Command::new("podman")
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()?;
        if !output.status.success() {
            let error = format!("podman {} failed ({})", args[0], output.status);
            return Err(io::Error::other(error));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    };
    let ids = match podman(&["ps", "--all", "--quiet", "--no-trunc"]) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        ids => ids?,
    };
    let ids: Vec<&str> = ids.split_whitespace().collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let format = [
        "container",
        "inspect",
        "--format",
        "{{.ID}} {{.OCIRuntime}} {{.Name}}",
    ];
    let said = podman(&[&format[..], &ids].concat())?;
    let mut made: Vec<Made> = said
        .lines()
        .filter_map(|line| {
            let mut words = line.splitn(3, ' ');
            let (id, theirs, name) = (words.next()?, words.next()?, words.next());
            (theirs == runtime).then(|| Made {
                id: id.to_owned(),
                name: name.map(str::to_owned),
            })
        })
        .collect();
    made.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
    Ok(made)
}

/// The JSON file `name` in `folder`, when it is a regular file that
/// parses.
fn json_at(folder: &File, name: &str) -> Option<Value> {
    let file = open_at(folder, name, libc::O_NONBLOCK).ok()?;
    let bytes = file::bounded(file, MOST).ok()?.ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// `name` in `dir`, opened for reading without following a link.
fn open_at(dir: &File, name: &str, flags: libc::c_int) -> io::Result<File> {
    let name = CString::new(name).map_err(|_| io::ErrorKind::InvalidInput)?;
    let flags = flags | libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY;
    // SAFETY: a valid descriptor and a NUL-terminated name; the result is
    // checked before use.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor we just opened and own alone.
    Ok(unsafe { File::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn finds_the_containers_made_with_the_runtime_and_follows_no_link() {
        let root = std::env::temp_dir().join(format!("eatmydata-inuse-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let container = |id: &str, runtime: &str, name: &str| {
            let folder = root.join("containers").join(id);
            fs::create_dir_all(&folder).unwrap();
            let settings = format!("{{\"Runtime\": \"{runtime}\"}}");
            fs::write(folder.join("hostconfig.json"), settings).unwrap();
            let config = format!("{{\"Name\": \"/{name}\"}}");
            fs::write(folder.join("config.v2.json"), config).unwrap();
            folder
        };
        assert_eq!(made_with(&root, "eatmydata").unwrap(), []);
        container("aaaa0000aaaa0000", "eatmydata", "db");
        container("bbbb", "runc", "web");
        // A link where a settings file should be: not followed.
        let linked = root.join("containers/cccc");
        fs::create_dir_all(&linked).unwrap();
        let elsewhere = root.join("elsewhere.json");
        fs::write(&elsewhere, "{\"Runtime\": \"eatmydata\"}").unwrap();
        symlink(&elsewhere, linked.join("hostconfig.json")).unwrap();
        symlink(
            root.join("containers/aaaa0000aaaa0000"),
            root.join("containers/eeee"),
        )
        .unwrap();
        let made = made_with(&root, "eatmydata").unwrap();
        let shown: Vec<String> = made.iter().map(Made::shown).collect();
        assert_eq!(shown, ["aaaa0000aaaa (db)"]);
        fs::remove_dir_all(&root).unwrap();
    }
}
