//! The profile sent with the request: the engine's default with the sync
//! rules (`crate::profile`), or the user's own `--security-opt
//! seccomp=FILE` read and given the same rules, never replaced. The
//! client reads the file and sends its JSON, so the file need live only
//! as long as the client: it is a sealed memfd, left open across the exec
//! and named `/proc/self/fd/N` on the line, which the client opens as its
//! own. Nothing is left behind on any disk, and nothing needs removing.
//!
//! What the profile does not do is said each time: it leaves the
//! `O_SYNC`/`O_DSYNC` of opens, does not see io_uring, and writes no
//! report; the runtime does all three.

use std::ffi::{CString, OsString};
use std::io::{Read as _, Write as _};
use std::os::fd::{FromRawFd as _, IntoRawFd as _, OwnedFd};

use serde_json::Value;

use super::AS_ASKED;
use super::profile;
use super::way::{Profile, with_profile};

/// The most bytes of a user's profile read.
const PROFILE_MAX: u64 = 4 << 20;

/// What the profile way leaves to the runtime.
pub const NOT_COVERED: &str = "O_SYNC and O_DSYNC opens still sync, io_uring is not seen, and \
     no report is written, which the eatmydata runtime would do";

/// The line to run with `profile` sent, from the verb at `at` in `args`,
/// and what to say; or, when it cannot be made, what to say instead (the
/// line then runs as it was).
pub fn send(
    args: &[OsString],
    at: usize,
    profile: &Profile,
) -> Result<(Vec<OsString>, String), String> {
    let engine = profile.engine.name();
    let (json, what) = match &profile.user {
        Some(user) => merged(&user.value)?,
        None => {
            let version = profile.version.as_deref();
            let chosen = profile::default_for(profile.engine, version).map_err(|e| {
                format!("eatmydata's profile for {engine} cannot be made: {e}. {AS_ASKED}")
            })?;
            let note = chosen.note.strip_prefix("eatmydata: profile: ");
            let what = note.unwrap_or(&chosen.note).to_owned();
            (chosen.json, format!("{what}, its sync calls answered 0"))
        }
    };
    let path = memfd(&json).map_err(|e| {
        format!("eatmydata's profile cannot be handed to {engine} (memfd: {e}). {AS_ASKED}")
    })?;
    let line = with_profile(args, at, profile.user.as_ref(), &path);
    let said = format!(
        "{}, so {engine} {} sends eatmydata's seccomp profile ({what}): {NOT_COVERED}.",
        profile.instead,
        args[at].to_string_lossy(),
    );
    Ok((line, said))
}

/// The user's profile at `file`, with the sync rules added; what was done.
fn merged(file: &OsString) -> Result<(Value, String), String> {
    let shown = std::path::Path::new(file).display();
    let bad = |why: String| {
        format!(
            "your seccomp profile {shown} {why}, so eatmydata cannot add its rules to it: \
             nothing is sent but yours. {AS_ASKED}"
        )
    };
    let mut text = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(PROFILE_MAX + 1).read_to_end(&mut text))
        .map_err(|e| bad(format!("cannot be read ({e})")))?;
    if text.len() as u64 > PROFILE_MAX {
        return Err(bad(format!("is over {PROFILE_MAX} bytes")));
    }
    let mut json: Value =
        serde_json::from_slice(&text).map_err(|e| bad(format!("is not JSON ({e})")))?;
    let rules = match json.get("syscalls") {
        None => true,
        Some(Value::Array(rules)) => rules.iter().all(Value::is_object),
        Some(_) => false,
    };
    let shaped = json.is_object() && rules;
    if !shaped {
        return Err(bad(
            "is not shaped as a profile (an object, its syscalls a list of rules)".into(),
        ));
    }
    let answered = profile::add_sync_rules(&mut json);
    if let Some(why) = answered.malformed {
        return Err(bad(format!("is not shaped as a profile ({why})")));
    }
    let mut what = format!("your profile {shown}, its sync calls answered 0");
    if !answered.left.is_empty() {
        what += &format!(" but {}, which it refuses", answered.left.join(" "));
    }
    Ok((json, what))
}

/// `json` in a sealed memfd left open for the client; its name there.
fn memfd(json: &Value) -> std::io::Result<String> {
    let text = serde_json::to_vec(json).map_err(std::io::Error::other)?;
    let name = CString::new("eatmydata-seccomp").map_err(std::io::Error::other)?;
    // SAFETY: a NUL-terminated name and flags; no memory is handed over.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_ALLOW_SEALING) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just made and owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut file = std::fs::File::from(owned);
    file.write_all(&text)?;
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: fcntl on a descriptor we own, with an int argument.
    if unsafe { libc::fcntl(fd, libc::F_ADD_SEALS, seals) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let path = format!("/proc/self/fd/{fd}");
    if !std::path::Path::new(&path).exists() {
        return Err(std::io::Error::other("/proc is not mounted"));
    }
    // Open across the exec, for the client: never closed here.
    let _ = file.into_raw_fd();
    Ok(path)
}
