//! What install changed, kept on the host so that `uninstall` (in another
//! container, maybe of another version) can put it back byte for byte:
//! for each engine file, its text before the first install (or that there
//! was none) and the text install left. `/var/lib/eatmydata/install.json`,
//! root's alone; read bounded and parsed strictly.

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;

use serde_json::{Value, json};

use super::args::Engine;
use super::host::Host;
use super::{Error, register};

/// Our folder on the host.
pub const FOLDER: &str = "/var/lib/eatmydata";
const FILE: &str = "install.json";
/// More than any engine file and its copy could need.
const LIMIT: u64 = 4 << 20;

/// One engine file install changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    /// The host's path.
    pub path: String,
    /// Its text before the first install; `None`: there was no file.
    pub before: Option<String>,
    /// The text install last wrote.
    pub after: String,
}

#[derive(Debug, Default, PartialEq)]
pub struct Record {
    pub files: Vec<Kept>,
}

impl Record {
    /// Install is about to replace `old` by `new` at `path`: the first
    /// `before` stays.
    pub fn note(&mut self, path: &str, old: Option<&str>, new: &str) {
        match self.files.iter_mut().find(|kept| kept.path == path) {
            Some(kept) => kept.after = new.to_owned(),
            None => self.files.push(Kept {
                path: path.to_owned(),
                before: old.map(str::to_owned),
                after: new.to_owned(),
            }),
        }
    }

    /// The engine the files belong to, by their paths.
    pub fn engine(&self) -> Option<Engine> {
        self.files
            .first()
            .and_then(|kept| register::engine_of(&kept.path))
    }

    fn to_json(&self) -> String {
        let files: Vec<Value> = self
            .files
            .iter()
            .map(|kept| json!({"path": kept.path, "before": kept.before, "after": kept.after}))
            .collect();
        serde_json::to_string_pretty(&json!({ "files": files })).unwrap_or_default() + "\n"
    }

    fn from_json(text: &str) -> Option<Record> {
        let value: Value = serde_json::from_str(text).ok()?;
        let files = value.as_object()?.get("files")?.as_array()?;
        let files = files
            .iter()
            .map(|file| {
                let file = file.as_object()?;
                let before = match file.get("before")? {
                    Value::Null => None,
                    Value::String(text) => Some(text.clone()),
                    _ => return None,
                };
                Some(Kept {
                    path: file.get("path")?.as_str()?.to_owned(),
                    before,
                    after: file.get("after")?.as_str()?.to_owned(),
                })
            })
            .collect::<Option<Vec<Kept>>>()?;
        Some(Record { files })
    }
}

/// The record; empty when there is none.
pub fn read(host: &Host) -> Result<Record, Error> {
    let path = host.own_folder(FOLDER)?.join(FILE);
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&path);
    let mut file = match file {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Record::default()),
        Err(error) => return Err(Error::io("open", &path)(error)),
    };
    let mut text = String::new();
    (&mut file)
        .take(LIMIT)
        .read_to_string(&mut text)
        .map_err(Error::io("read", &path))?;
    Record::from_json(&text).ok_or_else(|| Error::Unparsable {
        file: path,
        why: "it is not the record install writes".into(),
    })
}

pub fn write(host: &Host, record: &Record) -> Result<(), Error> {
    let path = host.own_folder(FOLDER)?.join(FILE);
    register::write(&path, record.to_json().as_bytes(), 0o600)
}

/// Removes the record. The folder and its lock stay: another installer
/// may be waiting on that lock, and a lock file removed under it would let
/// a third one take a new one beside it.
pub fn remove(host: &Host) -> Result<(), Error> {
    let path = host.own_folder(FOLDER)?.join(FILE);
    match fs::remove_file(&path) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => {
            Err(Error::io("remove", path)(error))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_before_and_reads_back_what_it_wrote() {
        let mut record = Record::default();
        record.note("/etc/containerd/config.toml", Some("# theirs\n"), "a");
        record.note("/etc/containerd/config.toml", Some("a"), "b");
        record.note("/etc/crio/crio.conf.d/99-eatmydata.conf", None, "c");
        assert_eq!(record.files[0].before.as_deref(), Some("# theirs\n"));
        assert_eq!(record.files[0].after, "b");
        assert_eq!(Record::from_json(&record.to_json()), Some(record));
        for bad in [
            "",
            "[]",
            "{\"files\": [{\"path\": 1}]}",
            "{\"files\": [{}]}",
        ] {
            assert_eq!(Record::from_json(bad), None, "{bad}");
        }
    }
}
