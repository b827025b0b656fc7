//! What the command and the library must agree on, defined once.
//!
//! Both products include this file (`#[path]`), so it holds constants only:
//! it links no hook into the command and no std into the library. The
//! variables are the library's switches, read from the environment of each
//! process it is loaded into; the command sets them for its options, and a
//! user may set them by hand.

/// Makes the library a pure pass-through when on (set, not empty, not `0`):
/// for images that set `LD_PRELOAD` globally and want durability back for
/// one command.
pub const DISABLE: &str = "EATMYDATA_DISABLE";

/// Keeps `O_DIRECT` on opens and `F_SETFL` when on (`--keep-direct`).
pub const KEEP_DIRECT: &str = "EATMYDATA_KEEP_DIRECT";

/// Names the file to which each process appends its report line at exit
/// (`--report`). The file must exist: the library never creates it.
pub const REPORT: &str = "EATMYDATA_REPORT";

/// The path of the library, for the command, instead of looking for it.
pub const LIBRARY: &str = "EATMYDATA_LIBRARY";

/// The fields of a report line after `pid=` and `name=`, in the library's
/// order of counters: `pid=1 name=sh fsync=0 sync=0 ... direct=0`.
pub const REPORT_FIELDS: [&str; 7] = ["fsync", "sync", "range", "msync", "open", "write", "direct"];

/// Names the file to which each process appends a record the first time it
/// skips a sync on a file system (`--sync-at-exit`): [`FLUSH_DEVICE`] and
/// the device as `MAJOR:MINOR` in hex, 8 digits each, or [`FLUSH_ALL`] when
/// no file system can be named (`sync()`, `msync`). The file must exist.
pub const FLUSH_LIST: &str = "EATMYDATA_FLUSH_LIST";

/// A record's first word when it names a device: `dev 00000007:00000003`.
pub const FLUSH_DEVICE: &str = "dev";

/// A record's first word when a sync was skipped on no known file system:
/// `all 00000000:00000000`, which asks for `sync(2)`.
pub const FLUSH_ALL: &str = "all";

/// Asks the command for `--sync-at-exit` when on, where no option can be
/// given (symlink mode). The library does not read it.
pub const SYNC_AT_EXIT: &str = "EATMYDATA_SYNC_AT_EXIT";

/// Silences the command's note about database clients when `0`.
pub const CLIENT_NOTICE: &str = "EATMYDATA_CLIENT_NOTICE";
