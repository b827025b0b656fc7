//! Which file system a skipped flush was on: that of a descriptor, from
//! `statx(2)`, or of the file mapped at an address, from `/proc/self/maps`.
//! `--sync-at-exit` records it to flush it at the end, `--report` counts the
//! flushes skipped there. Asked only when one of them is on, and errno is
//! left as it was.

use core::ffi::{c_int, c_long};

use crate::errno;
use crate::kernel::raw;
use crate::maps::{self, Mapping};
use crate::protocol::Device;

/// Where a skipped flush was.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Place {
    /// On the file system of this device.
    Device(Device),
    /// On memory of no file: there was nothing to flush.
    Nothing,
    /// Where no file system can be named.
    Unknown,
}

/// The file system `fd` is on.
pub fn of_fd(fd: c_int) -> Place {
    let saved = errno::get();
    // SAFETY: statx is plain data, for which zero is a valid value.
    let mut stat: libc::statx = unsafe { core::mem::zeroed() };
    // stx_dev_major and stx_dev_minor are filled whatever the mask.
    let args = [
        fd.into(),
        c"".as_ptr() as c_long,
        libc::AT_EMPTY_PATH.into(),
        0,
        &raw mut stat as c_long,
        0,
    ];
    let place = if raw(libc::SYS_statx, args) == 0 {
        Place::Device((stat.stx_dev_major, stat.stx_dev_minor))
    } else {
        Place::Unknown
    };
    errno::set(saved);
    place
}

/// The file system of the file mapped at `address` for `length` bytes;
/// unknown when the mapping cannot be told or the range goes past it.
pub fn of_mapping(address: usize, length: usize) -> Place {
    let saved = errno::get();
    let place = match maps::of(address) {
        Some((mapping, end)) if (address as u64).saturating_add(length as u64) <= end => {
            match mapping {
                Mapping::File(major, minor) => Place::Device((major, minor)),
                Mapping::Anonymous => Place::Nothing,
            }
        }
        _ => Place::Unknown,
    };
    errno::set(saved);
    place
}
