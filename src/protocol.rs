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
