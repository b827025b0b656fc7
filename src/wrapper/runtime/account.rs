//! What the runtime saved, container by container: each container the
//! runtime serves as root gets a report file of its own (`container.rs`,
//! bound into it by `edit/account.rs`), where its processes under the
//! library append their report lines; at `delete` the file is folded into
//! one record of the machine-wide account (`book.rs`, `record.rs`), which
//! `eatmydata-runtime report` sums up (`report.rs`).
//!
//! Only as root: a rootless runtime has no `/run/eatmydata` or
//! `/var/lib/eatmydata` of its own to write, and its containers go
//! without an account (its log line says so).

mod book;
mod by_mount;
mod container;
mod names;
mod record;
mod report;
mod shown;
mod time;

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::process::{CommandExt as _, ExitStatusExt};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::edit;
pub use report::run as report;

/// Whether this process may make the account's folders: root.
fn is_root() -> bool {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() == 0 }
}

/// On `create`: makes container `id`'s report file and binds it into
/// `spec`, after sweeping the folders of containers gone without a
/// `delete`; `root` is the real runtime's state folder, `bundle` the
/// container's (`names.rs` reads its name and image from there, or from
/// the spec); `kept` what it keeps (`edit/keep.rs`), for the account by
/// mount. Returns the log's words for what was done.
pub fn at_create(
    spec: &mut Value,
    id: Option<&OsStr>,
    root: &Path,
    bundle: &Path,
    kept: &edit::keep::Kept,
) -> String {
    let base = &container::base();
    let Some(id) = id
        .and_then(OsStr::to_str)
        .filter(|id| container::valid_id(id))
    else {
        return "no account (an id that cannot name a folder)".to_owned();
    };
    if !is_root() {
        return "no account (the runtime is not root)".to_owned();
    }
    if let Some(why) = edit::account::no_place(spec) {
        return format!("no account ({why})");
    }
    container::sweep(base);
    let named = names::of(spec, bundle, id);
    let meta = container::Meta {
        id: id.to_owned(),
        name: named.name,
        image: named.image,
        root: root.to_owned(),
        account: book::folder(),
        created: time::now(),
        mounts: by_mount::of_spec(spec),
        keeps: kept.paths.clone(),
        unread: kept.unread.clone(),
    };
    let report = match container::make(base, &meta) {
        Ok(report) => report,
        Err(error) => return format!("no account ({})", crate::error::plain(&error)),
    };
    match edit::account::add(spec, &report) {
        Ok(()) => format!("its report file at {}", edit::account::INSIDE),
        Err(why) => {
            let _ = container::fold(base, id);
            format!("no account ({why})")
        }
    }
}

/// After a build step's barrier: its `flushes` go into container `id`'s
/// record, when the container has a folder (else only the log says them).
pub fn barrier(id: &OsStr, flushes: u64) {
    if let Some(id) = id.to_str() {
        let _ = container::add_barrier(&container::base(), id, flushes);
    }
}

/// Whether container `id` has a report folder to fold at its `delete`.
pub fn has_folder(id: &OsStr) -> bool {
    id.to_str()
        .is_some_and(|id| container::valid_id(id) && container::base().join(id).is_dir())
}

/// On `delete` of a container with a folder: runs the real runtime's
/// `delete` (`runtime`, `args` as given) to its end and, once it has
/// deleted the container, folds the report into the account. Returns the
/// real runtime's exit status (128 + a signal's number), and the log's
/// words.
pub fn delete(runtime: &Path, args: &[OsString], id: &OsStr) -> io::Result<(i32, String)> {
    let status = Command::new(runtime).arg0(runtime).args(args).status()?;
    let code = status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    if code != 0 {
        return Ok((code, "not deleted: its report is kept".to_owned()));
    }
    let id = id.to_str().unwrap_or_default();
    let said = match container::fold(&container::base(), id) {
        Ok(Some(record)) => format!(
            "account: {} processes, {} flushes skipped, recorded in {}",
            record.processes,
            record.flushes_skipped(),
            book::folder().display()
        ),
        Ok(None) => "account: folded already".to_owned(),
        Err(error) => format!("account: not recorded ({})", crate::error::plain(&error)),
    };
    Ok((code, said))
}
