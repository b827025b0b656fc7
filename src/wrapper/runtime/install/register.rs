//! The engine's files: which ones install writes, their new text through
//! `configure`'s editors (one per format, never a second one here), and
//! their old text back on uninstall, from the record.
//!
//! containerd 1.x (config version 1 or 2) merges an imported file's plugin
//! table over the main file's whole, so the entry goes into the main
//! `config.toml`, as `configure` writes it. containerd 2.x (version 3)
//! merges imports key by key: when its `imports` take
//! `/etc/containerd/conf.d/*.toml`, the entry is a drop-in there and the
//! main file is not touched. CRI-O: a drop-in of ours in `crio.conf.d`.
//! dockerd: `daemon.json`.

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use toml_edit::Item;

use super::Error;
use super::args::Engine;
use super::host::Host;
use super::state::Record;
use crate::runtime::configure::{self, Want};

/// The handler's name, a RuntimeClass's `handler`.
pub const NAME: &str = configure::REGISTERED;
/// The node label the DaemonSet sets and the RuntimeClass selects.
pub const LABEL: &str = "eatmydata.io/runtime";

const CONTAINERD: &str = "/etc/containerd/config.toml";
const CONTAINERD_DROP_IN: &str = "/etc/containerd/conf.d/99-eatmydata.toml";
const CRIO_DROP_IN: &str = "/etc/crio/crio.conf.d/99-eatmydata.conf";
const DOCKER: &str = "/etc/docker/daemon.json";
/// Engine files are read up to this size.
const LIMIT: u64 = 1 << 20;

/// A file to replace (`new`) or remove (`new: None`).
#[derive(Debug, PartialEq)]
pub struct Change {
    pub path: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// The engine whose files are on the host: containerd's, CRI-O's or
/// dockerd's config, else the socket of one; refused when none or several.
pub fn detect(host: &Host) -> Result<Engine, Error> {
    let found: Vec<Engine> = [
        (
            Engine::Containerd,
            CONTAINERD,
            "/run/containerd/containerd.sock",
        ),
        (Engine::Crio, "/etc/crio", "/run/crio/crio.sock"),
        (Engine::Docker, DOCKER, "/run/docker.sock"),
    ]
    .into_iter()
    .filter(|(_, config, socket)| host.at(config).exists() || host.at(socket).exists())
    .map(|(engine, _, _)| engine)
    .collect();
    match found[..] {
        [engine] => Ok(engine),
        // dockerd runs its own containerd: the node's engine is dockerd.
        [Engine::Containerd, Engine::Docker] => Ok(Engine::Docker),
        _ => Err(Error::Usage(format!(
            "cannot tell the engine (found {}); give --engine",
            if found.is_empty() { "none" } else { "several" }
        ))),
    }
}

/// The engine a recorded file belongs to.
pub fn engine_of(path: &str) -> Option<Engine> {
    match path {
        CONTAINERD | CONTAINERD_DROP_IN => Some(Engine::Containerd),
        CRIO_DROP_IN => Some(Engine::Crio),
        DOCKER => Some(Engine::Docker),
        _ => None,
    }
}

/// What install changes to register `runtime` (the host's path) with
/// `engine`: nothing when the files say so already.
pub fn plan(
    engine: Engine,
    host: &Host,
    runtime: &str,
    keep_binds: bool,
) -> Result<Vec<Change>, Error> {
    let want = Want {
        path: runtime.to_owned(),
        default: false,
        real: None,
        keep_binds,
    };
    let (format, path) = match engine {
        Engine::Containerd => (configure::Engine::Containerd, CONTAINERD),
        Engine::Crio => (configure::Engine::Crio, CRIO_DROP_IN),
        Engine::Docker => (configure::Engine::Docker, DOCKER),
    };
    let old = read(host, path)?;
    let unparsable = |path: &str| {
        let file = host.at(path);
        move |why| Error::Unparsable { file, why }
    };
    let new = format
        .register(old.as_deref().unwrap_or(""), &want)
        .map_err(unparsable(path))?;
    let (path, old, new) = match engine {
        Engine::Containerd if imports_drop_in(old.as_deref().unwrap_or("")) => {
            let drop_in = drop_in(&new).map_err(unparsable(path))?;
            (CONTAINERD_DROP_IN, read(host, CONTAINERD_DROP_IN)?, drop_in)
        }
        _ => (path, old, new),
    };
    if old.as_deref() == Some(new.as_str()) {
        return Ok(Vec::new());
    }
    Ok(vec![Change {
        path: path.into(),
        old,
        new: Some(new),
    }])
}

/// Whether a containerd config is version 3 or later and imports our
/// drop-in (by its name, or `*.toml`/`*` of its folder; a relative import
/// is relative to the main file's folder).
fn imports_drop_in(text: &str) -> bool {
    let Ok(doc) = configure::toml::parse(text) else {
        return false;
    };
    if doc.get("version").and_then(Item::as_integer).unwrap_or(1) < 3 {
        return false;
    }
    let (folder, _) = CONTAINERD_DROP_IN.rsplit_once('/').unwrap_or_default();
    let main_folder = CONTAINERD.rsplit_once('/').unwrap_or_default().0;
    let imports = doc.get("imports").and_then(Item::as_array);
    imports
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str())
        .any(|import| {
            let import = match import.starts_with('/') {
                true => import.to_owned(),
                false => format!("{main_folder}/{import}"),
            };
            import == CONTAINERD_DROP_IN
                || [format!("{folder}/*.toml"), format!("{folder}/*")].contains(&import)
        })
}

/// A version 3 drop-in holding the entry `configure` wrote into `edited`
/// (which took the default runtime's options from the main file).
fn drop_in(edited: &str) -> Result<String, String> {
    let doc = configure::toml::parse(edited)?;
    let path = [
        "plugins",
        "io.containerd.cri.v1.runtime",
        "containerd",
        "runtimes",
    ];
    let entry = path
        .iter()
        .chain([&NAME])
        .try_fold(doc.as_item(), |item, key| item.get(key))
        .ok_or("it has no entry for eatmydata after the edit")?
        .clone();
    let mut out = configure::toml::parse("version = 3\n")?;
    let runtimes = configure::toml::table(out.as_item_mut(), &path)?;
    if let Some(table) = runtimes.as_table_like_mut() {
        table.insert(NAME, entry);
    }
    Ok(out.to_string())
}

/// What uninstall changes: each recorded file that still holds what
/// install wrote goes back to what it held before. A file changed since
/// (by hand, or by another tool) is refused before anything is touched.
pub fn undo(host: &Host, record: &Record) -> Result<Vec<Change>, Error> {
    let mut changes = Vec::new();
    for kept in record.files.iter().rev() {
        let now = read(host, &kept.path)?;
        if now == kept.before {
            continue;
        }
        if now.as_deref() != Some(kept.after.as_str()) {
            return Err(Error::Unparsable {
                file: host.at(&kept.path),
                why: format!(
                    "it changed since install wrote it, so it cannot be put back as it was \
                     (what it held before is in {}/install.json; `eatmydata-runtime configure \
                     ENGINE --remove --config FILE` takes out eatmydata's entry alone)",
                    super::state::FOLDER
                ),
            });
        }
        changes.push(Change {
            path: kept.path.clone(),
            old: now,
            new: kept.before.clone(),
        });
    }
    Ok(changes)
}

/// Carries a change out: the file replaced in one rename, its mode and
/// owner kept (0644 for a new one), or removed.
pub fn apply(host: &Host, change: &Change) -> Result<(), Error> {
    let path = host.no_link(&change.path)?;
    match &change.new {
        Some(text) => {
            if let Some(folder) = path.parent() {
                fs::create_dir_all(folder).map_err(Error::io("make the folder", folder))?;
            }
            write(&path, text.as_bytes(), 0o644)
        }
        None => fs::remove_file(&path).map_err(Error::io("remove", &path)),
    }
}

/// The text of the host's engine file `path`, `None` when there is none:
/// a regular file, no link, UTF-8, read up to 1 MiB without waiting on a
/// FIFO.
pub fn read(host: &Host, path: &str) -> Result<Option<String>, Error> {
    let path = host.no_link(path)?;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&path);
    let mut file = match file {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(Error::io("open", &path)(error)),
    };
    let meta = file.metadata().map_err(Error::io("look at", &path))?;
    if !meta.is_file() || meta.len() > LIMIT {
        let why = "it is not a regular file of at most 1 MiB".into();
        return Err(Error::Unparsable { file: path, why });
    }
    let mut bytes = Vec::new();
    (&mut file)
        .take(LIMIT)
        .read_to_end(&mut bytes)
        .map_err(Error::io("read", &path))?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| Error::Unparsable {
            file: path,
            why: "it is not UTF-8 text".into(),
        })
}

/// Writes `bytes` to a new file beside `path` and renames it over; an
/// existing file's mode and owner kept, else `mode` (`configure`'s writer).
pub fn write(path: &Path, bytes: &[u8], mode: u32) -> Result<(), Error> {
    let like = fs::symlink_metadata(path).ok().filter(|m| m.is_file());
    configure::file::write_renamed(path, bytes, like.as_ref(), mode)
        .map_err(Error::io("write", path))
}

#[cfg(test)]
mod tests;
