//! A caller's mappings, from `/proc/TID/maps` (proc_pid_maps(5)): where
//! `msync` looks for gaps and for the file systems of shared file
//! mappings, and where a rewrite of the caller's memory checks that it
//! writes only memory of the caller's own (a private mapping), never a
//! file or memory shared with another process.

/// One line of `maps`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapping {
    pub from: u64,
    pub to: u64,
    /// `MAP_SHARED` (`s`), not private (`p`).
    pub shared: bool,
    /// The device (`major:minor`) and inode of the file mapped; inode 0
    /// for anonymous memory.
    pub dev: (u32, u32),
    pub inode: u64,
}

/// One line of `maps`; `None` for a line not in that shape.
pub fn parse(line: &str) -> Option<Mapping> {
    let mut fields = line.split_whitespace();
    let (from, to) = fields.next()?.split_once('-')?;
    let perms = fields.next()?;
    let _offset = fields.next()?;
    let (major, minor) = fields.next()?.split_once(':')?;
    Some(Mapping {
        from: u64::from_str_radix(from, 16).ok()?,
        to: u64::from_str_radix(to, 16).ok()?,
        shared: perms.ends_with('s'),
        dev: (
            u32::from_str_radix(major, 16).ok()?,
            u32::from_str_radix(minor, 16).ok()?,
        ),
        inode: fields.next()?.parse().ok()?,
    })
}

/// Whether `len` bytes at `address` lie in one private mapping of `maps`.
pub fn private(maps: &str, address: u64, len: u64) -> bool {
    let Some(end) = address.checked_add(len) else {
        return false;
    };
    maps.lines()
        .filter_map(parse)
        .find(|m| m.from <= address && address < m.to)
        .is_some_and(|m| !m.shared && end <= m.to)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
1000-3000 rw-s 00000000 08:01 12 /data/file
3000-4000 rw-p 00000000 00:00 0
7f00-7f10 r--s 00001000 fd:02 4242 /usr/lib/x
";

    #[test]
    fn lines_are_read() {
        let mapping = MAPS.lines().nth(2).and_then(parse).unwrap();
        assert_eq!(
            mapping,
            Mapping {
                from: 0x7f00,
                to: 0x7f10,
                shared: true,
                dev: (0xfd, 2),
                inode: 4242
            }
        );
        assert_eq!(parse("garbage"), None);
    }

    #[test]
    fn only_private_memory_is_private() {
        assert!(private(MAPS, 0x3000, 8));
        assert!(private(MAPS, 0x3ff8, 8));
        assert!(!private(MAPS, 0x3ffc, 8), "past its end");
        assert!(!private(MAPS, 0x1000, 8), "a shared file");
        assert!(!private(MAPS, 0x5000, 8), "not mapped");
        assert!(!private(MAPS, u64::MAX - 2, 8));
    }
}
