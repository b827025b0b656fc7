//! The runtime an engine is told to run must be this command: a link that
//! resolves to it, or a copy of the same bytes. Anything else sitting at
//! `eatmydata-runtime` beside the command (a planted script, an older
//! build) would run as root for every container.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::Path;

/// Whether `path` is the program at `this`; `Err` says how it is not.
pub fn check(path: &Path, this: &Path) -> Result<(), String> {
    let resolved = fs::canonicalize(path).map_err(|e| crate::error::plain(&e))?;
    let this = fs::canonicalize(this).map_err(|e| crate::error::plain(&e))?;
    if resolved == this {
        return Ok(());
    }
    match same_bytes(&resolved, &this) {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!(
            "it is not this command ({}) nor a link to it, and its bytes differ",
            this.display()
        )),
        Err(error) => Err(format!(
            "it cannot be compared with this command: {}",
            crate::error::plain(&error)
        )),
    }
}

/// Whether two regular files hold the same bytes.
fn same_bytes(a: &Path, b: &Path) -> io::Result<bool> {
    let (mut a, mut b) = (File::open(a)?, File::open(b)?);
    let (meta_a, meta_b) = (a.metadata()?, b.metadata()?);
    if !meta_a.is_file() || meta_a.len() != meta_b.len() {
        return Ok(false);
    }
    let (mut x, mut y) = (vec![0; 1 << 16], vec![0; 1 << 16]);
    loop {
        let n = a.read(&mut x)?;
        if n == 0 {
            return Ok(true);
        }
        b.read_exact(&mut y[..n])?;
        if x[..n] != y[..n] {
            return Ok(false);
        }
    }
}
