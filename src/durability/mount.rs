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
//! [`Scope`] of fixed size, by one reading ([`Scope::learn`]). The rule
//! leans to durability wherever it is unsure: a file whose mount cannot be
//! told makes its sync reach the disk, and an entry of either list that
//! cannot be read (`protocol::Unread`: relative, empty, naming no mount,
//! one past [`MOUNTS_MAX`]) keeps every sync, and is named for the user.
//! The worst that costs is a flush; the other way would lose data the user
//! asked to keep.

use crate::protocol::{BadEntry, List, Unread, Unreadable, read_paths};

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
    /// A list could not be read: keep every sync.
    keep_all: bool,
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
        keep_all: false,
        only_given: false,
    };

    /// A list could not be read: every sync is kept.
    pub const NONE: Scope = Scope {
        keep_all: true,
        ..Scope::ALL
    };

    /// The one reading of the values of `KEEP` and `ONLY` (empty: not
    /// given), `mount_of` finding the mount that holds each path (`None`:
    /// none). Either list with an entry that cannot be read gives
    /// [`Scope::NONE`] and that entry: the form of both is judged before
    /// any path is looked up.
    pub fn learn<'a>(
        keep: &'a [u8],
        only: &'a [u8],
        mount_of: impl FnMut(&[u8]) -> Option<Mount>,
    ) -> (Scope, Option<Unreadable<'a>>) {
        let read = match (read_paths(keep), read_paths(only)) {
            (Err(bad), _) => Err(Unreadable {
                list: List::Keep,
                bad,
            }),
            (_, Err(bad)) => Err(Unreadable {
                list: List::Only,
                bad,
            }),
            (Ok(kept), Ok(eaten)) => Scope::resolved(kept, eaten, !only.is_empty(), mount_of),
        };
        match read {
            Ok(scope) => (scope, None),
            Err(unreadable) => (Scope::NONE, Some(unreadable)),
        }
    }

    /// [`Scope::learn`]'s lists, read, resolved by `mount_of`.
    fn resolved<'a>(
        kept: impl Iterator<Item = &'a [u8]>,
        eaten: impl Iterator<Item = &'a [u8]>,
        only_given: bool,
        mut mount_of: impl FnMut(&[u8]) -> Option<Mount>,
    ) -> Result<Scope, Unreadable<'a>> {
        let mut scope = Scope::ALL;
        scope.keep_len = resolve(List::Keep, kept, &mut scope.keep, &mut mount_of)?;
        scope.only_len = resolve(List::Only, eaten, &mut scope.only, &mut mount_of)?;
        scope.only_given = only_given;
        Ok(scope)
    }

    /// Whether any variable scopes the eating: if not, every sync is eaten
    /// without asking where.
    pub fn scoped(&self) -> bool {
        self.keep_all || self.keep_len > 0 || self.only_given
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
        if self.keep_all || self.kept().iter().any(|kept| kept.same(at)) {
            return false;
        }
        !self.only_given || self.eaten_by_name().iter().any(|eaten| eaten.same(at))
    }

    /// What `sync(2)`, which names no file system, becomes: eaten
    /// unscoped; with `ONLY` (every mount it does not name is kept) or a
    /// list not read, the real one; else a `syncfs` of each kept mount.
    pub fn whole_sync(&self) -> WholeSync {
        if !self.scoped() {
            WholeSync::Eat
        } else if self.only_given || self.keep_all {
            WholeSync::Real
        } else {
            WholeSync::KeptOnly
        }
    }
}

/// The mounts of `list`'s `entries` into `into`, by `mount_of`: how many,
/// or the first entry that names none or is one too many.
fn resolve<'a>(
    list: List,
    entries: impl Iterator<Item = &'a [u8]>,
    into: &mut [Mount; MOUNTS_MAX],
    mount_of: &mut impl FnMut(&[u8]) -> Option<Mount>,
) -> Result<usize, Unreadable<'a>> {
    let mut len = 0;
    for entry in entries {
        let why = match (mount_of(entry), into.get_mut(len)) {
            (Some(mount), Some(slot)) => {
                *slot = mount;
                len += 1;
                continue;
            }
            (None, _) => Unread::NoMount,
            (Some(_), None) => Unread::TooMany,
        };
        let bad = BadEntry { entry, why };
        return Err(Unreadable { list, bad });
    }
    Ok(len)
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

    /// A table of mounts by path: `/mN` is mount N on device (7, N), any
    /// other path none.
    fn table(path: &[u8]) -> Option<Mount> {
        let n: u32 = core::str::from_utf8(path.strip_prefix(b"/m")?)
            .ok()?
            .parse()
            .ok()?;
        at(n.into(), (7, n))
    }

    fn learn<'a>(keep: &'a str, only: &'a str) -> (Scope, Option<Unreadable<'a>>) {
        Scope::learn(keep.as_bytes(), only.as_bytes(), table)
    }

    fn unread(list: List, entry: &str, why: Unread) -> Option<Unreadable<'_>> {
        let entry = entry.as_bytes();
        Some(Unreadable {
            list,
            bad: BadEntry { entry, why },
        })
    }

    #[test]
    fn unscoped_everything_is_eaten() {
        let (scope, unread) = learn("", "");
        assert_eq!((scope, unread), (Scope::ALL, None));
        assert!(!scope.scoped());
        assert!(scope.eats(at(1, (8, 1))) && scope.eats(None));
        assert_eq!(scope.whole_sync(), WholeSync::Eat);
    }

    #[test]
    fn keep_keeps_its_mounts_and_eats_the_rest() {
        let (scope, unread) = learn("/m40", "");
        assert_eq!(unread, None);
        assert!(scope.scoped());
        assert!(!scope.eats(at(40, (7, 40))), "the kept mount");
        assert!(scope.eats(at(41, (7, 41))), "another mount");
        // A bind mount of the kept file system is another mount by id...
        assert!(scope.eats(at(42, (7, 40))));
        // ...but one by device where the id is not known (a mapping).
        assert!(!scope.eats(by_dev((7, 40))));
        assert!(scope.eats(by_dev((7, 2))));
        assert!(!scope.eats(None), "unsure is kept");
        assert_eq!(scope.whole_sync(), WholeSync::KeptOnly);
        assert_eq!(scope.kept(), [at(40, (7, 40)).unwrap()]);
    }

    #[test]
    fn an_entry_that_cannot_be_read_keeps_everything_and_is_named() {
        let cases = [
            ("data", "", unread(List::Keep, "data", Unread::Relative)),
            (
                "/m1:/data:",
                "",
                unread(List::Keep, "/m1:/data:", Unread::Unparsable),
            ),
            (
                "/m1:/gone",
                "",
                unread(List::Keep, "/gone", Unread::NoMount),
            ),
            // The form of both lists is judged before any path is looked up.
            ("/gone", "rel", unread(List::Only, "rel", Unread::Relative)),
            (
                "/m1",
                "/m2::",
                unread(List::Only, "/m2::", Unread::Unparsable),
            ),
            (
                "/m1",
                "/m2:/gone",
                unread(List::Only, "/gone", Unread::NoMount),
            ),
        ];
        for (keep, only, named) in cases {
            let (scope, unread) = learn(keep, only);
            assert_eq!(unread, named, "{keep} {only}");
            assert_eq!(scope, Scope::NONE);
            for mount in [at(1, (7, 1)), at(2, (7, 2)), at(9, (8, 0)), None] {
                assert!(!scope.eats(mount), "{keep} {only}: {mount:?}");
            }
            assert_eq!(scope.whole_sync(), WholeSync::Real);
        }
        let most: Vec<String> = (0..=MOUNTS_MAX).map(|n| format!("/m{n}")).collect();
        let most = most.join(":");
        let (scope, unread) = learn(&most, "");
        let last = format!("/m{MOUNTS_MAX}");
        assert_eq!(unread, self::unread(List::Keep, &last, Unread::TooMany));
        assert!(!scope.eats(at(99, (8, 0))), "one past the table");
        let (scope, unread) = learn("", &most);
        assert_eq!(unread, self::unread(List::Only, &last, Unread::TooMany));
        assert!(!scope.eats(at(0, (7, 0))));
    }

    #[test]
    fn only_eats_on_its_mounts_alone() {
        let (scope, unread) = learn("", "/m40");
        assert_eq!(unread, None);
        assert!(scope.eats(at(40, (7, 40))));
        assert!(!scope.eats(at(41, (7, 41))));
        assert!(!scope.eats(None));
        assert_eq!(scope.whole_sync(), WholeSync::Real);
    }

    #[test]
    fn keep_wins_over_only() {
        let (scope, unread) = learn("/m41", "/m40:/m41");
        assert_eq!(unread, None);
        assert!(scope.eats(at(40, (7, 40))));
        assert!(!scope.eats(at(41, (7, 41))));
        assert!(!scope.eats(at(42, (7, 42))));
    }
}
