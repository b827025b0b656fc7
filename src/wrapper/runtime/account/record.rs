//! One container's record in the account: a line of JSON, written whole
//! and read strictly. A line that is not a whole record (cut by a crash,
//! a field of the wrong kind, a number out of range) is not a record; a
//! field this version does not know is left aside, so that an older
//! `report` reads a newer runtime's lines.
//!
//! ```text
//! {"v":1,"id":"4f3c…","name":"db","image":"postgres:16","ended":"2026-12-02T10:00:00Z",
//!  "processes":3,"skips":{"fsync":120,"sync":0,…},"flushes":[{"device":"7:3",
//!  "count":120,"on":"/mnt (ext4 on loop3)"}],"flushes_unnamed":0,"unreadable":0,
//!  "barrier":1}
//! ```

use serde_json::{Map, Value, json};

use super::time;
use crate::protocol::{Counts, Device, SKIPS};

/// The version written in every record.
const VERSION: u64 = 1;

/// The longest record line read: a record is written well under it.
pub const LINE_MAX: usize = 16 * 1024;

/// The most bytes a text field of a record keeps (an id, a name, an
/// image, a file system's name): engines choose them, not us.
pub const TEXT_MAX: usize = 256;

/// The most file systems a record names.
pub const PLACES_MAX: usize = 32;

/// Skipped flushes on one file system.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub device: Device,
    pub count: u64,
    /// How the host named it when the record was made: `/mnt (ext4 on
    /// loop3)`, or empty when it was not mounted there.
    pub on: String,
}

/// What one container's processes skipped.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub id: String,
    pub name: String,
    pub image: String,
    /// When the container's run ended (the engine deleted it from the
    /// runtime), in seconds since the epoch.
    pub ended: i64,
    /// Processes that reported (one line each).
    pub processes: u64,
    pub skips: Counts,
    pub flushes: Vec<Place>,
    pub flushes_unnamed: u64,
    /// Lines of the container's report file that were not report lines.
    pub unreadable: u64,
    /// The flushes the runtime made itself: one `syncfs` per file system
    /// at the end of a build step (`runtime/barrier.rs`). A record
    /// without the field (an older runtime's) made none.
    pub barrier: u64,
    /// The eaten flushes on each of the container's mounts the runtime
    /// noted, by destination (`by_mount.rs`); none in an older record.
    pub eaten_by_mount: Vec<(String, u64)>,
    /// The flushes kept (their mount is kept: they reached the disk) on
    /// each of those mounts, as the library counted them; `None` in an
    /// older record, which did not count them.
    pub kept_by_mount: Option<Vec<(String, u64)>>,
    /// Flushes kept where no noted mount could be named (a whole `sync()`,
    /// a file whose mount could not be told, a file system no noted mount
    /// is on).
    pub kept_unnamed: u64,
    /// The paths the container kept (`EATMYDATA_KEEP` as the runtime
    /// named it); none in an older record.
    pub keeps: Vec<String>,
    /// A list the container gave that could not be read, so that it kept
    /// every sync, in a user's words; none in an older record.
    pub unread: Option<String>,
}

/// A list of `{"on": DESTINATION, "flushes": COUNT}`.
fn mounts_json(list: &[(String, u64)]) -> Vec<Value> {
    list.iter()
        .take(PLACES_MAX)
        .map(|(on, count)| json!({"on": bounded(on), "flushes": count}))
        .collect()
}

/// [`mounts_json`]'s list read back strictly: `None` unless each entry
/// is whole and bounded.
fn mounts_of(list: &Value) -> Option<Vec<(String, u64)>> {
    let list = list.as_array()?;
    if list.len() > PLACES_MAX {
        return None;
    }
    list.iter()
        .map(|one| {
            let on = one.get("on")?.as_str()?;
            let count = one.get("flushes")?.as_u64()?;
            (on.len() <= TEXT_MAX).then(|| (on.to_owned(), count))
        })
        .collect()
}

/// `text` cut to [`TEXT_MAX`] bytes at a character's boundary, control
/// characters and those that change how a text reads unseen (bidi,
/// zero-width: `shown::unseen`) shown as `?`.
pub fn bounded(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if out.len() + c.len_utf8() > TEXT_MAX {
            break;
        }
        out.push(if c.is_control() || super::shown::unseen(c) {
            '?'
        } else {
            c
        });
    }
    out
}

impl Record {
    /// The record as one line, its newline included.
    pub fn to_line(&self) -> String {
        let skips: Map<String, Value> = SKIPS
            .iter()
            .zip(self.skips)
            .map(|((_, key, _), count)| ((*key).to_owned(), json!(count)))
            .collect();
        let flushes: Vec<Value> = self
            .flushes
            .iter()
            .take(PLACES_MAX)
            .map(|place| {
                json!({
                    "device": format!("{}:{}", place.device.0, place.device.1),
                    "count": place.count,
                    "on": bounded(&place.on),
                })
            })
            .collect();
        let mut value = json!({
            "v": VERSION,
            "id": bounded(&self.id),
            "name": bounded(&self.name),
            "image": bounded(&self.image),
            "ended": time::format(self.ended),
            "processes": self.processes,
            "skips": skips,
            "flushes": flushes,
            "flushes_unnamed": self.flushes_unnamed,
            "unreadable": self.unreadable,
            "barrier": self.barrier,
            "eaten_by_mount": mounts_json(&self.eaten_by_mount),
            "kept_unnamed": self.kept_unnamed,
            "keeps": self.keeps.iter().take(PLACES_MAX).map(|p| bounded(p)).collect::<Vec<_>>(),
        });
        if let (Some(kept), Some(object)) = (&self.kept_by_mount, value.as_object_mut()) {
            object.insert("kept_by_mount".into(), mounts_json(kept).into());
        }
        if let (Some(unread), Some(object)) = (&self.unread, value.as_object_mut()) {
            object.insert("unread".into(), bounded(unread).into());
        }
        let mut line = value.to_string();
        line.push('\n');
        line
    }

    /// Reads a line (without its newline) back: `None` unless it is a
    /// whole record of this version.
    pub fn parse(line: &str) -> Option<Record> {
        if line.len() > LINE_MAX {
            return None;
        }
        let value: Value = serde_json::from_str(line).ok()?;
        let object = value.as_object()?;
        if object.get("v")?.as_u64()? != VERSION {
            return None;
        }
        let text = |key: &str| -> Option<String> {
            let text = object.get(key)?.as_str()?;
            (text.len() <= TEXT_MAX).then(|| text.to_owned())
        };
        let number = |key: &str| object.get(key)?.as_u64();
        let mut skips: Counts = [0; SKIPS.len()];
        let given = object.get("skips")?.as_object()?;
        for ((_, key, _), count) in SKIPS.iter().zip(skips.iter_mut()) {
            *count = given.get(*key)?.as_u64()?;
        }
        let places = object.get("flushes")?.as_array()?;
        if places.len() > PLACES_MAX {
            return None;
        }
        let flushes = places
            .iter()
            .map(|place| {
                let device = place.get("device")?.as_str()?;
                let (major, minor) = device.split_once(':')?;
                let on = place.get("on")?.as_str()?;
                Some(Place {
                    device: (major.parse().ok()?, minor.parse().ok()?),
                    count: place.get("count")?.as_u64()?,
                    on: (on.len() <= TEXT_MAX).then(|| on.to_owned())?,
                })
            })
            .collect::<Option<Vec<Place>>>()?;
        Some(Record {
            id: text("id").filter(|id| !id.is_empty())?,
            name: text("name")?,
            image: text("image")?,
            ended: time::parse_rfc3339(object.get("ended")?.as_str()?)?,
            processes: number("processes")?,
            skips,
            flushes,
            flushes_unnamed: number("flushes_unnamed")?,
            unreadable: number("unreadable")?,
            barrier: match object.get("barrier") {
                Some(value) => value.as_u64()?,
                None => 0,
            },
            eaten_by_mount: match object.get("eaten_by_mount") {
                Some(list) => mounts_of(list)?,
                None => vec![],
            },
            kept_by_mount: match object.get("kept_by_mount") {
                Some(list) => Some(mounts_of(list)?),
                None => None,
            },
            kept_unnamed: match object.get("kept_unnamed") {
                Some(value) => value.as_u64()?,
                None => 0,
            },
            keeps: match object.get("keeps") {
                Some(list) => {
                    let list = list.as_array()?;
                    if list.len() > PLACES_MAX {
                        return None;
                    }
                    list.iter()
                        .map(|path| path.as_str().filter(|p| p.len() <= TEXT_MAX))
                        .map(|path| path.map(str::to_owned))
                        .collect::<Option<Vec<_>>>()?
                }
                None => vec![],
            },
            unread: match object.get("unread") {
                Some(said) => Some(said.as_str().filter(|s| s.len() <= TEXT_MAX)?.to_owned()),
                None => None,
            },
        })
    }

    /// The flushes skipped: the skips of a kind that stands for one.
    pub fn flushes_skipped(&self) -> u64 {
        SKIPS
            .iter()
            .zip(self.skips)
            .filter(|((skip, _, _), _)| skip.is_flush())
            .fold(0u64, |sum, (_, count)| sum.saturating_add(count))
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    pub fn example(id: &str, fsyncs: u64) -> Record {
        Record {
            id: id.to_owned(),
            name: "db".to_owned(),
            image: "postgres:16".to_owned(),
            ended: time::parse_rfc3339("2026-12-02T10:00:00Z").unwrap(),
            processes: 3,
            skips: [fsyncs, 1, 2, 3, 4, 5, 6],
            flushes: vec![Place {
                device: (7, 3),
                count: fsyncs,
                on: "/mnt (ext4 on loop3)".to_owned(),
            }],
            flushes_unnamed: 1,
            unreadable: 0,
            barrier: 2,
            eaten_by_mount: vec![("/data".to_owned(), fsyncs)],
            kept_by_mount: Some(vec![("/keep".to_owned(), 100)]),
            kept_unnamed: 1,
            keeps: vec!["/keep".to_owned()],
            unread: None,
        }
    }

    #[test]
    fn a_record_reads_back_as_written() {
        let record = example("4f3c", 120);
        let line = record.to_line();
        assert!(line.ends_with("}\n") && line.matches('\n').count() == 1);
        assert!(line.contains(r#""skips":{"fsync":120,"sync":1,"range":2,"msync":3,"open":4,"write":5,"direct":6}"#), "{line}");
        assert_eq!(Record::parse(line.trim_end()), Some(record.clone()));
        assert_eq!(record.flushes_skipped(), 120 + 1 + 3 + 5);
    }

    #[test]
    fn only_a_whole_record_is_a_record() {
        let line = example("a", 1).to_line();
        let line = line.trim_end();
        // Every cut of a record, as a crash leaves it, is not one.
        for cut in 0..line.len() {
            assert_eq!(Record::parse(&line[..cut]), None, "{}", &line[..cut]);
        }
        let with = |from: &str, to: &str| Record::parse(&line.replacen(from, to, 1));
        assert!(with(r#""v":1"#, r#""v":2"#).is_none());
        assert!(with(r#""fsync":1"#, r#""fsync":-1"#).is_none());
        assert!(with(r#""fsync":1"#, r#""fsync":"1""#).is_none());
        assert!(with(r#""id":"a""#, r#""id":"""#).is_none());
        assert!(with(r#""device":"7:3""#, r#""device":"7""#).is_none());
        assert!(
            with(
                r#""ended":"2026-12-02T10:00:00Z""#,
                r#""ended":"yesterday""#
            )
            .is_none()
        );
        assert!(
            with(r#""direct":6"#, r#""direct":6,"uring":9"#).is_some(),
            "a newer kind"
        );
        assert!(with(r#""v":1"#, r#""v":1,"newer":true"#).is_some());
        // An older runtime's record names no mount.
        let older = line.replace(r#","eaten_by_mount":[{"on":"/data","flushes":1}]"#, "");
        assert_eq!(
            Record::parse(&older).map(|r| r.eaten_by_mount),
            Some(vec![])
        );
        assert!(
            with(
                r#""on":"/data","flushes":1"#,
                r#""on":"/data","flushes":"1""#
            )
            .is_none()
        );
        // An older runtime's record counted no kept flush and named no
        // kept path: not counted, rather than none.
        let older = line
            .replace(r#","kept_unnamed":1"#, "")
            .replace(r#","keeps":["/keep"]"#, "")
            .replace(r#","kept_by_mount":[{"on":"/keep","flushes":100}]"#, "");
        assert!(!older.contains("kept"), "{older}");
        let read = Record::parse(&older).unwrap();
        assert_eq!(read.kept_by_mount, None);
        assert_eq!((read.kept_unnamed, read.keeps.len()), (0, 0));
        assert!(with(r#""keeps":["/keep"]"#, r#""keeps":"/keep""#).is_none());
        assert!(with(r#""keeps":["/keep"]"#, r#""keeps":[7]"#).is_none());
        assert!(with(r#""kept_unnamed":1"#, r#""kept_unnamed":-1"#).is_none());
        assert!(with(r#""on":"/keep","flushes":100"#, r#""on":"/keep""#).is_none());
        // An older runtime's record has no barrier: none was made.
        assert_eq!(with(r#","barrier":2"#, "").map(|r| r.barrier), Some(0));
        assert!(with(r#""barrier":2"#, r#""barrier":"2""#).is_none());
        let long = "x".repeat(TEXT_MAX + 1);
        assert!(with(r#""name":"db""#, &format!(r#""name":"{long}""#)).is_none());
        assert_eq!(Record::parse("[]"), None);
        assert_eq!(Record::parse(&" ".repeat(LINE_MAX + 1)), None);
    }

    #[test]
    fn what_an_engine_names_is_bounded_and_has_no_line_breaks() {
        let mut record = example("a", 1);
        record.name = format!("evil\nname{}", "é".repeat(300));
        let line = record.to_line();
        assert_eq!(line.matches('\n').count(), 1);
        let back = Record::parse(line.trim_end()).unwrap();
        assert!(back.name.starts_with("evil?name") && back.name.len() <= TEXT_MAX);
    }
}
