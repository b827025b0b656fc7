//! Keep by mount (`--keep`, `--only`, `EATMYDATA_KEEP`, `EATMYDATA_ONLY`):
//! which syncs are eaten, by the mount of the file they are on. One rule
//! for the library, which learns a descriptor's mount with `statx(2)`
//! (the unique id, `STATX_MNT_ID_UNIQUE`, where the kernel has it, else
//! `STATX_MNT_ID`), and the seccomp supervisor, which reads it from
//! `/proc/PID/fdinfo` (`mnt_id`, as `STATX_MNT_ID` gives it). Each learns
//! the kept mounts its own way, so that it compares ids of one kind.
//!
//! The kept mounts are learned once, when a process starts, from the paths
//! of the two variables (`protocol::KEEP`, `protocol::ONLY`), into a
//! [`Scope`] of fixed size. The rule leans to durability wherever it is
//! unsure: a file whose mount cannot be told, a `KEEP` entry that names no
//! mount or one past [`MOUNTS_MAX`], make the sync reach the disk. The
//! worst that costs is a flush; the other way would lose data the user
//! asked to keep.

/// Where a file is: its mount, where the kernel names one (`statx`'s
/// `stx_mnt_id`, Linux 5.8, unique from 6.8; `fdinfo`'s `mnt_id`), and
/// the device of its file system (`st_dev`; `/proc/PID/maps` names only
/// this).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mount {
    pub id: Option<u64>,
    pub dev: (u32, u32),
}

impl Mount {
    /// Whether `self` and `other` are one mount: the same id where both
    /// have one, else the same device. A device stands for every mount of
    /// its file system (bind mounts of one file system are told apart
    /// only by id).
    pub fn same(self, other: Mount) -> bool {
        match (self.id, other.id) {
            (Some(mine), Some(theirs)) => mine == theirs,
            _ => self.dev == other.dev,
        }
    }
}

/// The most mounts each list of a [`Scope`] holds; an entry past them
/// counts as one that names no mount.
pub const MOUNTS_MAX: usize = 16;

/// The kept mounts and the eaten ones, as a process learned them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scope {
    keep: [Mount; MOUNTS_MAX],
    keep_len: usize,
    only: [Mount; MOUNTS_MAX],
    only_len: usize,
    /// A `KEEP` entry named no mount that could be learned: keep every sync.
    keep_unknown: bool,
    /// `ONLY` was given: eat on its mounts alone.
    only_given: bool,
}

impl Default for Scope {
    fn default() -> Scope {
        Scope::ALL
    }
}

/// What `sync(2)` becomes under a [`Scope`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WholeSync {
    /// Nothing: every file system's syncs are eaten.
    Eat,
    /// `syncfs(2)` of each kept mount, and nothing else.
    KeptOnly,
    /// The real `sync(2)`: some file system that is not known by name
    /// keeps its syncs.
    Real,
}

const NO_MOUNT: Mount = Mount {
    id: None,
    dev: (0, 0),
};

impl Scope {
    /// No variable given: every sync is eaten, as without keep by mount.
    pub const ALL: Scope = Scope {
        keep: [NO_MOUNT; MOUNTS_MAX],
        keep_len: 0,
        only: [NO_MOUNT; MOUNTS_MAX],
        only_len: 0,
        keep_unknown: false,
        only_given: false,
    };

    /// Adds an entry of `KEEP`: the mount it resolved to, or `None` when
    /// it resolved to none.
    pub fn keep(&mut self, mount: Option<Mount>) {
        match (mount, self.keep.get_mut(self.keep_len)) {
            (Some(mount), Some(slot)) => {
                *slot = mount;
                self.keep_len += 1;
            }
            _ => self.keep_unknown = true,
        }
    }

    /// Adds an entry of `ONLY`: the mount it resolved to, or `None`
    /// (which eats nothing more). Past [`MOUNTS_MAX`], an entry is left
    /// out: fewer mounts are eaten.
    pub fn only(&mut self, mount: Option<Mount>) {
        self.only_given = true;
        if let (Some(mount), Some(slot)) = (mount, self.only.get_mut(self.only_len)) {
            *slot = mount;
            self.only_len += 1;
        }
    }

    /// Whether any variable scopes the eating: if not, every sync is eaten
    /// without asking where.
    pub fn scoped(&self) -> bool {
        self.keep_unknown || self.keep_len > 0 || self.only_given
    }

    /// The mounts kept by name (`KEEP`'s).
    pub fn kept(&self) -> &[Mount] {
        self.keep.get(..self.keep_len).unwrap_or_default()
    }

    fn eaten_by_name(&self) -> &[Mount] {
        self.only.get(..self.only_len).unwrap_or_default()
    }

    /// The rule: whether a sync on a file at `at` (`None`: its mount could
    /// not be told) is eaten. Unscoped, always; else not where unsure, not
    /// on a kept mount, and with `ONLY`, only on one of its mounts.
    pub fn eats(&self, at: Option<Mount>) -> bool {
        if !self.scoped() {
            return true;
        }
        let Some(at) = at else {
            return false;
        };
        if self.keep_unknown || self.kept().iter().any(|kept| kept.same(at)) {
            return false;
        }
        !self.only_given || self.eaten_by_name().iter().any(|eaten| eaten.same(at))
    }

    /// What `sync(2)`, which names no file system, becomes: eaten
    /// unscoped; with `ONLY` (every mount it does not name is kept) or a
    /// `KEEP` entry not learned, the real one; else a `syncfs` of each
    /// kept mount.
    pub fn whole_sync(&self) -> WholeSync {
        if !self.scoped() {
            WholeSync::Eat
        } else if self.only_given || self.keep_unknown {
            WholeSync::Real
        } else {
            WholeSync::KeptOnly
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(id: u64, dev: (u32, u32)) -> Option<Mount> {
        Some(Mount { id: Some(id), dev })
    }

    fn by_dev(dev: (u32, u32)) -> Option<Mount> {
        Some(Mount { id: None, dev })
    }

    #[test]
    fn unscoped_everything_is_eaten() {
        let scope = Scope::ALL;
        assert!(!scope.scoped());
        assert!(scope.eats(at(1, (8, 1))) && scope.eats(None));
        assert_eq!(scope.whole_sync(), WholeSync::Eat);
    }

    #[test]
    fn keep_keeps_its_mounts_and_eats_the_rest() {
        let mut scope = Scope::ALL;
        scope.keep(at(40, (7, 1)));
        assert!(scope.scoped());
        assert!(!scope.eats(at(40, (7, 1))), "the kept mount");
        assert!(scope.eats(at(41, (7, 2))), "another mount");
        // A bind mount of the kept file system is another mount by id...
        assert!(scope.eats(at(42, (7, 1))));
        // ...but one by device where the id is not known (a mapping).
        assert!(!scope.eats(by_dev((7, 1))));
        assert!(scope.eats(by_dev((7, 2))));
        assert!(!scope.eats(None), "unsure is kept");
        assert_eq!(scope.whole_sync(), WholeSync::KeptOnly);
        assert_eq!(scope.kept(), [at(40, (7, 1)).unwrap()]);
    }

    #[test]
    fn a_keep_entry_that_names_no_mount_keeps_everything() {
        let mut scope = Scope::ALL;
        scope.keep(at(40, (7, 1)));
        scope.keep(None);
        assert!(!scope.eats(at(41, (7, 2))));
        assert_eq!(scope.whole_sync(), WholeSync::Real);
        let mut full = Scope::ALL;
        for id in 0..MOUNTS_MAX as u64 {
            full.keep(at(id, (7, id as u32)));
        }
        assert!(full.eats(at(99, (8, 0))));
        full.keep(at(99, (8, 0)));
        assert!(!full.eats(at(100, (8, 1))), "one past the table");
    }

    #[test]
    fn only_eats_on_its_mounts_alone() {
        let mut scope = Scope::ALL;
        scope.only(at(40, (7, 1)));
        assert!(scope.eats(at(40, (7, 1))));
        assert!(!scope.eats(at(41, (7, 2))));
        assert!(!scope.eats(None));
        assert_eq!(scope.whole_sync(), WholeSync::Real);
        let mut none = Scope::ALL;
        none.only(None);
        assert!(none.scoped() && !none.eats(at(40, (7, 1))), "names nothing");
        let mut full = Scope::ALL;
        for id in 0..=MOUNTS_MAX as u64 {
            full.only(at(id, (7, 0)));
        }
        assert!(full.eats(at(0, (7, 0))));
        assert!(!full.eats(at(MOUNTS_MAX as u64, (7, 0))), "left out");
    }

    #[test]
    fn keep_wins_over_only() {
        let mut scope = Scope::ALL;
        scope.only(at(40, (7, 1)));
        scope.only(at(41, (7, 2)));
        scope.keep(at(41, (7, 2)));
        assert!(scope.eats(at(40, (7, 1))));
        assert!(!scope.eats(at(41, (7, 2))));
        assert!(!scope.eats(at(42, (7, 3))));
    }
}
