//! `eatmydata-runtime configure ENGINE`: registration with an engine.
//! Not built yet: the `configure` engineer replaces this module.

use std::ffi::OsString;

/// Registers the runtime as `args` ask; for now, says it cannot.
pub fn run(_args: Vec<OsString>) -> std::ffi::c_int {
    eprintln!("eatmydata: configure is not built yet");
    2
}
