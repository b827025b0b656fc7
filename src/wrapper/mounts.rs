//! Which mount point stands for a file system, given the device number the
//! library recorded (a file's `stx_dev_major` and `stx_dev_minor`), from
//! `/proc/self/mountinfo`.
//!
//! `syncfs(2)` needs a descriptor on the file system, and a mount point is
//! the one path that is sure to be there; `--report` names a file system
//! by its mount point, type and source, and reads whether its barriers are
//! off. A device number that no line
//! names (btrfs subvolumes, overlayfs files, a mount namespace the command
//! made for itself, a file system unmounted since) has no mount point: the
//! caller then falls back to `sync(2)`.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

/// A device number, major and minor, as `statx(2)` gives it.
pub type Device = (u32, u32);

/// One line of mountinfo: where a file system is mounted, and which.
#[derive(Debug, PartialEq)]
pub struct Mount {
    /// The device number: major and minor.
    pub device: Device,
    pub point: PathBuf,
    /// Whether the whole file system is mounted here (its root is `/`), not
    /// a folder of it bound here.
    pub whole: bool,
    /// Its type (`ext4`), where it comes from (`/dev/vda1`, `tmpfs`), and
    /// the options of the file system itself (`rw,barrier=0`).
    pub fstype: String,
    pub source: String,
    pub options: String,
}

/// Parses `/proc/self/mountinfo`: `ID PARENT MAJOR:MINOR ROOT POINT ... -
/// TYPE SOURCE OPTIONS`.
pub fn parse(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split(' ').skip(2);
            let (major, minor) = fields.next()?.split_once(':')?;
            let device = (major.parse().ok()?, minor.parse().ok()?);
            let root = fields.next()?;
            let point = PathBuf::from(OsString::from_vec(unescape(fields.next()?)));
            let mut after = fields.skip_while(|&field| field != "-").skip(1);
            let mut text = || Some(String::from_utf8_lossy(&unescape(after.next()?)).into_owned());
            let (fstype, source, options) = (text(), text(), text());
            Some(Mount {
                device,
                point,
                whole: root == "/",
                fstype: fstype.unwrap_or_default(),
                source: source.unwrap_or_default(),
                options: options.unwrap_or_default(),
            })
        })
        .collect()
}

/// The line of `device` that mounts the whole file system, else any.
pub fn find(mounts: &[Mount], device: Device) -> Option<&Mount> {
    let mut found = mounts.iter().filter(|m| m.device == device);
    let first = found.clone().next();
    found.find(|m| m.whole).or(first)
}

/// The mount points of `device`, the ones that mount the whole file
/// system first, each in mountinfo's order.
pub fn points_of(mounts: &[Mount], device: Device) -> Vec<&PathBuf> {
    let mut found: Vec<&Mount> = mounts.iter().filter(|m| m.device == device).collect();
    found.sort_by_key(|m| !m.whole);
    found.into_iter().map(|m| &m.point).collect()
}

/// The kernel writes space, tab, newline and backslash in a path as `\ooo`.
fn unescape(field: &str) -> Vec<u8> {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        let octal = bytes
            .get(at + 1..at + 4)
            .filter(|digits| digits.iter().all(|d| (b'0'..=b'7').contains(d)))
            .and_then(|digits| u8::from_str_radix(std::str::from_utf8(digits).ok()?, 8).ok());
        match octal {
            Some(value) if byte == b'\\' => {
                out.push(value);
                at += 4;
            }
            _ => {
                out.push(byte);
                at += 1;
            }
        }
    }
    out
}

/// "MAJOR:MINOR", as mountinfo and `/proc/PID/maps` write a device.
pub fn device_name((major, minor): Device) -> String {
    format!("{major}:{minor}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw
25 22 0:21 / /proc rw,nosuid - proc proc rw
40 22 7:3 /data /srv/bound rw - ext4 /dev/loop3 rw
41 22 7:3 / /mnt/with\\040space\\134x rw - ext4 /dev/loop3 rw
42 22 259:65537 / /big rw - xfs /dev/nvme0n1p1 rw
broken line
";

    #[test]
    fn points_come_whole_file_system_first() {
        let mounts = parse(SAMPLE);
        assert_eq!(mounts.len(), 5);
        let loop3 = (7, 3);
        assert_eq!(
            points_of(&mounts, loop3),
            [
                &PathBuf::from("/mnt/with space\\x"),
                &PathBuf::from("/srv/bound")
            ]
        );
        assert_eq!(points_of(&mounts, (254, 1)), [&PathBuf::from("/")]);
        assert!(points_of(&mounts, (8, 1)).is_empty());
    }

    #[test]
    fn the_type_source_and_options_follow_the_dash() {
        let mounts = parse(SAMPLE);
        let loop3 = find(&mounts, (7, 3)).unwrap();
        assert_eq!(loop3.point, PathBuf::from("/mnt/with space\\x"));
        assert_eq!(
            (&*loop3.fstype, &*loop3.source, &*loop3.options),
            ("ext4", "/dev/loop3", "rw")
        );
        let proc = find(&mounts, (0, 21)).unwrap();
        assert_eq!((&*proc.fstype, &*proc.source), ("proc", "proc"));
        assert!(find(&mounts, (8, 1)).is_none());
        let odd = parse("1 2 8:1 / /x rw shared:3 master:1 - xfs /dev/sda1 rw,nobarrier\n");
        assert_eq!((&*odd[0].fstype, &*odd[0].options), ("xfs", "rw,nobarrier"));
        let short = parse("1 2 8:1 / /x rw\n");
        assert_eq!((short.len(), &*short[0].fstype), (1, ""));
    }

    #[test]
    fn large_device_numbers_are_read_whole() {
        let mounts = parse(SAMPLE);
        let device = (259, 65537);
        assert_eq!(points_of(&mounts, device), [&PathBuf::from("/big")]);
        assert_eq!(device_name(device), "259:65537");
    }

    #[test]
    fn the_running_system_has_a_root() {
        let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let root = std::fs::metadata("/").unwrap();
        use std::os::unix::fs::MetadataExt;
        let mounts = parse(&text);
        let device = (libc::major(root.dev()), libc::minor(root.dev()));
        assert!(
            points_of(&mounts, device).contains(&&PathBuf::from("/")),
            "{text}"
        );
    }
}
