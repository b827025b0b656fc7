//! Which file system each mount of a caller's is, from
//! `/proc/TID/mountinfo` (proc_pid_mountinfo(5)): by mount id (what
//! `/proc/TID/fdinfo/N` names for a descriptor) and by device (what
//! `/proc/TID/maps` names for a mapping). Reading these never calls into
//! the file systems themselves, so a hung NFS mount or a FUSE daemon of
//! the program's cannot stall the supervisor.
//!
//! A table is read once per mount namespace and kept, with its
//! `mountinfo` open: the kernel marks that descriptor `POLLPRI` when a
//! mount or unmount changes the namespace, and the table is read again
//! then (a mount id is reused only after an unmount). Tables of other
//! namespaces than the supervisor's are let go after `KEPT` unused: an
//! open `mountinfo` keeps its namespace, and with it its mounts, alive.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use super::caller::Caller;
use crate::durability::disk_fs_type;
use crate::durability::mount::{Mount, Scope};

/// How long a table of another namespace is kept unused.
pub const KEPT: Duration = Duration::from_secs(1);

/// One line of `mountinfo`: the mount id, the device (`major:minor`) and
/// the file system type. `None` for a line not in that shape.
pub fn parse_line(line: &str) -> Option<(u32, (u32, u32), &str)> {
    let mut fields = line.split(' ');
    let id = fields.next()?.parse().ok()?;
    let _parent = fields.next()?;
    let (major, minor) = fields.next()?.split_once(':')?;
    let dev = (major.parse().ok()?, minor.parse().ok()?);
    // Optional fields end at a lone "-"; the type follows it.
    let fs_type = fields.skip_while(|&f| f != "-").nth(1)?;
    Some((id, dev, fs_type))
}

/// One namespace's mounts: whether each keeps its data on a disk (and, by
/// id, its device too).
struct Table {
    file: File,
    by_id: HashMap<u32, (bool, (u32, u32))>,
    by_dev: HashMap<(u32, u32), bool>,
    used: Instant,
}

impl Table {
    fn read(file: File, now: Instant) -> Option<Table> {
        let mut table = Table {
            file,
            by_id: HashMap::new(),
            by_dev: HashMap::new(),
            used: now,
        };
        table.reread()?;
        Some(table)
    }

    fn reread(&mut self) -> Option<()> {
        let mut text = String::new();
        self.file.rewind().ok()?;
        self.file.read_to_string(&mut text).ok()?;
        self.by_id.clear();
        self.by_dev.clear();
        for (id, dev, fs_type) in text.lines().filter_map(parse_line) {
            let disk = disk_fs_type(fs_type.as_bytes());
            self.by_id.insert(id, (disk, dev));
            // A device mounted twice is the same file system.
            self.by_dev.insert(dev, disk);
        }
        Some(())
    }

    /// Whether the namespace changed since the table was read.
    fn changed(&self) -> bool {
        let mut poll = libc::pollfd {
            fd: self.file.as_raw_fd(),
            events: libc::POLLPRI,
            revents: 0,
        };
        // SAFETY: one pollfd, not waited for.
        let n = unsafe { libc::poll(&mut poll, 1, 0) };
        n != 0 || poll.revents != 0
    }
}

/// What a lookup asks for.
#[derive(Clone, Copy)]
pub enum By {
    /// A mount id, from `fdinfo`.
    Id(u32),
    /// A device, from `maps`.
    Dev(u32, u32),
}

/// The tables, by mount namespace (the inode of `/proc/TID/ns/mnt`), and
/// the mounts whose syncs are kept (`--keep`, `--only`).
#[derive(Default)]
pub struct Mounts {
    tables: HashMap<u64, Table>,
    own: Option<u64>,
    scope: Scope,
}

/// The mount namespace of `tid` (`self` for ours).
fn namespace(tid: &str) -> Option<u64> {
    let link = std::fs::read_link(format!("/proc/{tid}/ns/mnt")).ok()?;
    let link = link.to_str()?;
    link.strip_prefix("mnt:[")?.strip_suffix(']')?.parse().ok()
}

impl Mounts {
    /// Tables that judge by `scope` too ([`Mounts::eatable`]).
    pub fn scoped(scope: Scope) -> Mounts {
        Mounts {
            scope,
            ..Mounts::default()
        }
    }

    /// Whether a sync on the mount `by` names may be eaten: it keeps its
    /// data on a disk ([`Mounts::disk`]) and the scope does not keep it
    /// (`durability::mount`: by mount id from `fdinfo`, by device from
    /// `maps`). `None` when that is not known.
    pub fn eatable(&mut self, caller: Caller, by: By) -> Option<bool> {
        let disk = self.disk(caller, by)?;
        if !self.scope.scoped() {
            return Some(disk);
        }
        let at = match by {
            By::Id(id) => Mount {
                id: Some(id.into()),
                dev: self.dev_of(caller, id)?,
            },
            By::Dev(major, minor) => Mount {
                id: None,
                dev: (major, minor),
            },
        };
        Some(disk && self.scope.eats(Some(at)))
    }

    /// Whether syncs are kept by mount.
    pub fn by_mount(&self) -> bool {
        self.scope.scoped()
    }

    /// The device of mount `id` in the caller's table, read by [`Mounts::disk`].
    fn dev_of(&mut self, caller: Caller, id: u32) -> Option<(u32, u32)> {
        let ns = namespace(&caller.tid.to_string())?;
        Some(self.tables.get(&ns)?.by_id.get(&id)?.1)
    }

    /// Whether the mount `by` names, in the caller's namespace, keeps its
    /// data on a disk; `None` when that is not known (no such mount in
    /// its table: a pipe's or a socket's, or the caller out of reach).
    pub fn disk(&mut self, caller: Caller, by: By) -> Option<bool> {
        let ns = namespace(&caller.tid.to_string())?;
        let now = Instant::now();
        let table = match self.tables.get_mut(&ns) {
            Some(table) => {
                if table.changed() {
                    table.reread()?;
                }
                table
            }
            None => {
                if self.own.is_none() {
                    self.own = namespace("self");
                }
                let file = File::open(caller.proc_path("mountinfo")).ok()?;
                // The file is the namespace of the thread when it was
                // opened: if the thread moved since, ask again next time.
                let table = Table::read(file, now)?;
                if namespace(&caller.tid.to_string()) != Some(ns) {
                    return None;
                }
                self.tables.entry(ns).or_insert(table)
            }
        };
        table.used = now;
        match by {
            By::Id(id) => table.by_id.get(&id).map(|&(disk, _)| disk),
            By::Dev(major, minor) => table.by_dev.get(&(major, minor)).copied(),
        }
    }

    /// Lets go of other namespaces' tables unused for `KEPT`.
    pub fn forget_unused(&mut self, now: Instant) {
        let own = self.own;
        self.tables
            .retain(|ns, table| Some(*ns) == own || now.duration_since(table.used) < KEPT);
    }

    /// Whether a table of another namespace is held (to be let go later).
    pub fn holds_others(&self) -> bool {
        self.tables.keys().any(|&ns| Some(ns) != self.own)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_give_id_device_and_type() {
        let line = "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue";
        assert_eq!(parse_line(line), Some((36, (98, 0), "ext3")));
        let none = "25 1 0:22 / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw";
        assert_eq!(parse_line(none), Some((25, (0, 22), "tmpfs")));
        let fuse = "90 25 0:50 / /mnt/x rw shared:3 master:2 - fuse.sshfs host: rw";
        assert_eq!(parse_line(fuse), Some((90, (0, 50), "fuse.sshfs")));
        assert_eq!(parse_line("36 35 98:0 /mnt1 /mnt2 rw"), None);
        assert_eq!(parse_line(""), None);
    }

    #[test]
    fn our_own_root_is_named() {
        let mut mounts = Mounts::default();
        let me = Caller {
            tid: std::process::id(),
        };
        let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let (id, _, fs_type) = text.lines().find_map(parse_line).unwrap();
        let expected = disk_fs_type(fs_type.as_bytes());
        assert_eq!(mounts.disk(me, By::Id(id)), Some(expected));
        assert_eq!(mounts.disk(me, By::Id(u32::MAX)), None);
        assert!(!mounts.holds_others());
    }
}
