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
    // Named for the architectures a container runs on (x86-64, arm64),
    // not for those whose own names of the calls it need not name.
    let others = ["sync_file_range2", "arm_sync_file_range"];
    let refused: Vec<&str> = (answered.left.iter().copied())
        .filter(|call| !others.contains(call))
        .collect();
    if !refused.is_empty() {
        what += &format!(" but {}, which it refuses", refused.join(" "));
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

#[cfg(test)]
mod tests {
    use super::super::options::SeccompOption;
    use super::*;

    fn sent(user: Option<&std::path::Path>) -> Result<(Vec<OsString>, String), String> {
        let args: Vec<OsString> = match user {
            Some(file) => vec![
                "run".into(),
                format!("--security-opt=seccomp={}", file.display()).into(),
                "img".into(),
            ],
            None => vec!["run".into(), "img".into()],
        };
        let profile = Profile {
            engine: profile::Engine::Docker,
            version: Some("26.1.5".into()),
            user: user.map(|file| SeccompOption {
                word: 1,
                prefix: "--security-opt=seccomp=".len(),
                value: file.into(),
            }),
            instead: "the daemon has no eatmydata runtime".into(),
        };
        send(&args, 0, &profile)
    }

    /// The profile the line names, read as the client reads it.
    fn read_back(line: &[OsString]) -> Value {
        let word = line.iter().find_map(|w| {
            let w = w.to_str()?;
            Some(w[w.find("seccomp=")? + 8..].to_owned())
        });
        let path = word.expect("a seccomp option on the line");
        assert!(path.starts_with("/proc/self/fd/"), "{path}");
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
    }

    fn names(profile: &Value) -> Vec<String> {
        let rules = profile["syscalls"].as_array().unwrap();
        let answered = rules
            .iter()
            .filter(|r| r["action"] == "SCMP_ACT_ERRNO" && r["errnoRet"] == 0);
        answered
            .flat_map(|r| r["names"].as_array().unwrap().iter())
            .map(|n| n.as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn the_default_goes_in_a_sealed_memfd_the_line_names() {
        let (line, said) = sent(None).unwrap();
        assert_eq!(line[..2], ["run".into(), OsString::from("--security-opt")]);
        assert!(said.starts_with("the daemon has no eatmydata runtime, so docker run"));
        assert!(said.contains("Docker 26.1's default"), "{said}");
        let profile = read_back(&line);
        assert!(names(&profile).contains(&"fsync".to_owned()));
        // Sealed: the client reads it, nobody changes it.
        let path = line[2].to_str().unwrap().strip_prefix("seccomp=").unwrap();
        let written = std::fs::OpenOptions::new().append(true).open(path);
        let refused = written.and_then(|mut f| f.write_all(b" "));
        assert!(refused.is_err(), "a sealed memfd took a write");
    }

    #[test]
    fn the_users_profile_is_merged_and_a_bad_one_said() {
        let dir = std::env::temp_dir().join(format!("eatmydata-send-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let own = dir.join("own.json");
        let text = r#"{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[{"names":["read","fsync"],"action":"SCMP_ACT_ALLOW"}]}"#;
        std::fs::write(&own, text).unwrap();
        let (line, said) = sent(Some(&own)).unwrap();
        assert_eq!(line.len(), 3, "{line:?}");
        assert!(said.contains("your profile"), "{said}");
        // Refused by its default, so left refused, and said.
        assert!(said.contains("but fdatasync"), "{said}");
        let merged = read_back(&line);
        assert_eq!(merged["defaultAction"], "SCMP_ACT_ERRNO");
        assert!(names(&merged).contains(&"fsync".to_owned()), "{merged}");
        assert!(
            !names(&merged).contains(&"fdatasync".to_owned()),
            "{merged}"
        );
        let kept = merged["syscalls"].as_array().unwrap().iter().any(|r| {
            r["names"]
                .as_array()
                .is_some_and(|n| n.iter().any(|n| n == "read"))
        });
        assert!(kept, "the user's own rule: {merged}");
        for (text, why) in [
            ("{not json", "is not JSON"),
            ("[]", "is not shaped as a profile"),
            (r#"{"syscalls":{}}"#, "is not shaped as a profile"),
        ] {
            std::fs::write(&own, text).unwrap();
            let note = sent(Some(&own)).unwrap_err();
            assert!(note.contains(why), "{text}: {note}");
            assert!(note.ends_with("without eatmydata."), "{note}");
        }
        let gone = sent(Some(&dir.join("missing.json"))).unwrap_err();
        assert!(gone.contains("cannot be read"), "{gone}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
