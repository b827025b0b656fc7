//! Which file system a mapping's file is on, from `/proc/self/maps`, for
//! `--sync-at-exit` to record a skipped `msync(2)` where it belongs.
//!
//! The file is read with the library's own system calls into a buffer on the
//! stack, a line at a time; only a line's first fields are kept (`START-END
//! PERMS OFFSET MAJOR:MINOR INODE`, all in hex but the inode), which is all
//! that is needed. Asked only when `--sync-at-exit` is on and an `MS_SYNC`
//! is skipped: one open, a few reads and a close.

use crate::kernel::{close_own, open_own, read_own};

/// What the mapping of an address is.
#[derive(Debug, PartialEq)]
pub enum Mapping {
    /// A file's, on device `(major, minor)`.
    File(u32, u32),
    /// Memory of no file: nothing to flush.
    Anonymous,
}

/// The mapping that holds `address`, and the address where it ends; `None`
/// when it cannot be told.
pub fn of(address: usize) -> Option<(Mapping, u64)> {
    find(|line| mapping_in(line, address))
}

/// The first answer `found` gives for a line of `/proc/self/maps`.
fn find<T>(found: impl Fn(&[u8]) -> Option<T>) -> Option<T> {
    let fd = open_own(c"/proc/self/maps", libc::O_RDONLY)?;
    let mut chunk = [0u8; 2048];
    let mut line = [0u8; 128];
    let mut kept = 0;
    let mut answer = None;
    'reading: loop {
        let count = read_own(fd, &mut chunk);
        if count <= 0 {
            break;
        }
        for &byte in chunk.iter().take(count as usize) {
            if byte == b'\n' {
                answer = found(line.get(..kept).unwrap_or_default());
                if answer.is_some() {
                    break 'reading;
                }
                kept = 0;
            } else if let Some(slot) = line.get_mut(kept) {
                *slot = byte;
                kept += 1;
            }
        }
    }
    close_own(fd);
    answer
}

/// The mapping a line of maps describes and its end, if it holds `address`.
pub fn mapping_in(line: &[u8], address: usize) -> Option<(Mapping, u64)> {
    let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
    let mut range = fields.next()?.split(|&b| b == b'-');
    let start = number(range.next()?, 16)?;
    let end = number(range.next()?, 16)?;
    if !(start..end).contains(&(address as u64)) {
        return None;
    }
    let device = fields.nth(2)?;
    let inode = number(fields.next()?, 10)?;
    if inode == 0 {
        return Some((Mapping::Anonymous, end));
    }
    let mut parts = device.split(|&b| b == b':');
    let major = u32::try_from(number(parts.next()?, 16)?).ok()?;
    let minor = u32::try_from(number(parts.next()?, 16)?).ok()?;
    Some((Mapping::File(major, minor), end))
}

/// A number in `radix`, digits only.
fn number(digits: &[u8], radix: u32) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        let digit = u64::from((d as char).to_digit(radix)?);
        n.checked_mul(u64::from(radix))?.checked_add(digit)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &[u8] = b"7f12a0000000-7f12a0100000 rw-s 00000000 07:1f 12   /mnt/db/data.mdb";
    const ANONYMOUS: &[u8] = b"7f12b0000000-7f12b0001000 rw-p 00000000 00:00 0 ";

    #[test]
    fn a_files_mapping_names_its_device() {
        let file = Some((Mapping::File(7, 0x1f), 0x7f12a0100000));
        assert_eq!(mapping_in(FILE, 0x7f12a0000000), file);
        assert_eq!(mapping_in(FILE, 0x7f12a00fffff), file);
        assert_eq!(mapping_in(FILE, 0x7f12a0100000), None);
        let anonymous = Some((Mapping::Anonymous, 0x7f12b0001000));
        assert_eq!(mapping_in(ANONYMOUS, 0x7f12b0000800), anonymous);
    }

    #[test]
    fn broken_lines_tell_nothing() {
        assert_eq!(mapping_in(b"", 1), None);
        assert_eq!(mapping_in(b"zz-10 rw-s 0 07:1f 12", 1), None);
        assert_eq!(mapping_in(b"0-10 rw-s 0 07:1f", 1), None);
        assert_eq!(mapping_in(b"0-10 rw-s 0 7x:1f 12", 1), None);
    }

    #[test]
    fn this_processs_own_mappings_are_found() {
        let here = this_processs_own_mappings_are_found as *const () as usize;
        assert!(matches!(of(here), Some((Mapping::File(..), _))));
    }
}
