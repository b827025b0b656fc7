//! Where the library goes in a container, without a trace: a read-only
//! bind of the host's file at [`MOUNTED`], inside the tmpfs the spec mounts
//! at `/dev`. That tmpfs lives and dies with the container's mount
//! namespace, so no layer, volume, commit, export or host folder ever
//! holds the mount point runc makes for it (an earlier place, `/opt`, was
//! made in the writable layer, and refused by a read-only `/opt` or an
//! image whose `/opt` was a file).
//!
//! Only when the spec gives that place: the last mount at `/dev` is a
//! tmpfs (not a bind of the host's `/dev`, whose mount point would be made
//! on the host), not read-only, and nothing is mounted, masked or made
//! read-only at or under `/dev/.eatmydata`. Otherwise no library, and the
//! log line says why ([`NoPlace`]).
//!
//! The bind is a mount of its own: its flags are the options below, not
//! the tmpfs's. podman mounts `/dev` `noexec`, and the library stays
//! mappable for execution there (`tests/integration/runtime/edits.rs`,
//! `the_library_loads_under_a_noexec_dev`).

use serde_json::{Value, json};

/// Where the library is inside a container.
pub const MOUNTED: &str = "/dev/.eatmydata/libeatmydata.so";
/// The folder runc makes for it inside the `/dev` tmpfs.
const FOLDER: &str = "/dev/.eatmydata";

/// A read-only bind of one file: `rbind` as runc and crun want for a bind
/// (a file has no submounts, so `bind` would do the same), `nosuid` and
/// `nodev` because an unprivileged (rootless) runtime may not clear them
/// when it remounts read-only. No `noexec`: the library is mapped
/// executable.
pub const OPTIONS: [&str; 4] = ["rbind", "ro", "nosuid", "nodev"];

/// Why a spec gives the library no place.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NoPlace {
    /// No mount at `/dev`: runc would make the mount point in the rootfs.
    NoDev,
    /// The last mount at `/dev` is not a tmpfs (a bind of the host's).
    DevNotTmpfs,
    /// The `/dev` tmpfs is read-only: runc cannot make the mount point.
    DevReadOnly,
    /// Something is mounted, masked or read-only at or under the folder.
    Taken,
}

impl NoPlace {
    /// The log's words for it.
    pub fn describe(self) -> &'static str {
        match self {
            NoPlace::NoDev => "the spec mounts nothing at /dev",
            NoPlace::DevNotTmpfs => "the spec's /dev is not a tmpfs of its own",
            NoPlace::DevReadOnly => "the spec's /dev tmpfs is read-only",
            NoPlace::Taken => "the spec mounts something at or under /dev/.eatmydata",
        }
    }
}

/// `path` as runc reads a mount destination: relative to `/`, `.` and
/// empty parts dropped, `..` going up but never above `/`.
pub fn clean(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Whether `path` (clean) is `folder` or under it.
fn at_or_under(path: &str, folder: &str) -> bool {
    path == folder
        || path
            .strip_prefix(folder)
            .is_some_and(|rest| rest.starts_with('/'))
}

fn mounts(spec: &Value) -> impl Iterator<Item = &Value> {
    let mounts = spec.get("mounts").and_then(Value::as_array);
    mounts.into_iter().flatten()
}

fn destination(mount: &Value) -> Option<String> {
    mount.get("destination").and_then(Value::as_str).map(clean)
}

fn has_option(mount: &Value, option: &str) -> bool {
    let options = mount.get("options").and_then(Value::as_array);
    options
        .into_iter()
        .flatten()
        .any(|o| o.as_str() == Some(option))
}

/// Whether `mount` is `destination`'s bind as an edit makes it: a bind
/// with exactly `options`. One of the user's own at that place (an engine
/// gives a user's bind options of its own: Docker's `rprivate`, podman's
/// `rbind` without `nodev`) is the user's, never taken for ours.
pub fn is_ours(mount: &Value, destination: &str, options: &[&str]) -> bool {
    let given = mount.get("options").and_then(Value::as_array);
    let given = given.map(|o| o.iter().map(Value::as_str).collect::<Vec<_>>());
    let wanted: Vec<Option<&str>> = options.iter().copied().map(Some).collect();
    self::destination(mount).as_deref() == Some(destination)
        && mount.get("type").and_then(Value::as_str) == Some("bind")
        && given == Some(wanted)
}

fn ours(mount: &&Value) -> bool {
    is_ours(mount, MOUNTED, &OPTIONS)
}

/// Whether `spec` has the library's bind at [`MOUNTED`] ([`mount`]'s):
/// an edit put it there. What `exec` asks of a running container.
pub fn in_spec(spec: &Value) -> bool {
    mounts(spec).any(|m| ours(&m))
}

/// The host path of the library an edit mounted at [`MOUNTED`] in
/// `spec`, if any.
pub fn source(spec: &Value) -> Option<&str> {
    let mount = mounts(spec).find(ours)?;
    mount.get("source").and_then(Value::as_str)
}

/// Whether `spec` gives the library a place at [`MOUNTED`].
pub fn place(spec: &Value) -> Result<(), NoPlace> {
    let dev = mounts(spec)
        .filter(|m| destination(m).as_deref() == Some("/dev"))
        .last()
        .ok_or(NoPlace::NoDev)?;
    if dev.get("type").and_then(Value::as_str) != Some("tmpfs") || has_option(dev, "bind") {
        return Err(NoPlace::DevNotTmpfs);
    }
    if has_option(dev, "ro") {
        return Err(NoPlace::DevReadOnly);
    }
    let linux = spec.get("linux");
    let listed = ["maskedPaths", "readonlyPaths"]
        .into_iter()
        .flat_map(|key| {
            let paths = linux.and_then(|l| l.get(key)).and_then(Value::as_array);
            paths
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(clean)
        });
    let taken = mounts(spec).filter_map(destination).chain(listed);
    if taken.into_iter().any(|path| at_or_under(&path, FOLDER)) {
        return Err(NoPlace::Taken);
    }
    Ok(())
}

/// The mount that puts the host's `library` at [`MOUNTED`].
pub fn mount(library: &str) -> Value {
    json!({ "destination": MOUNTED, "type": "bind", "source": library, "options": OPTIONS })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(mounts: Value) -> Value {
        json!({ "mounts": mounts })
    }

    fn tmpfs_dev(options: &[&str]) -> Value {
        json!({ "destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": options })
    }

    #[test]
    fn destinations_are_read_as_runc_reads_them() {
        assert_eq!(clean("/dev"), "/dev");
        assert_eq!(clean("dev/"), "/dev");
        assert_eq!(clean("//dev/./x/../"), "/dev");
        assert_eq!(clean("/../../dev/.eatmydata"), "/dev/.eatmydata");
        assert_eq!(clean(""), "/");
        assert!(at_or_under("/dev/.eatmydata/x", FOLDER));
        assert!(at_or_under(FOLDER, FOLDER));
        assert!(!at_or_under("/dev/.eatmydatax", FOLDER));
    }

    #[test]
    fn a_tmpfs_at_dev_is_the_place_noexec_or_not() {
        assert_eq!(place(&spec(json!([tmpfs_dev(&["nosuid"])]))), Ok(()));
        let podman = tmpfs_dev(&["nosuid", "noexec", "strictatime"]);
        assert_eq!(place(&spec(json!([podman]))), Ok(()));
        let shm = json!({"destination": "/dev/shm", "type": "tmpfs"});
        assert_eq!(place(&spec(json!([tmpfs_dev(&[]), shm]))), Ok(()));
    }

    #[test]
    fn no_place_without_a_writable_tmpfs_of_its_own_at_dev() {
        assert_eq!(place(&json!({})), Err(NoPlace::NoDev));
        assert_eq!(place(&spec(json!([]))), Err(NoPlace::NoDev));
        let bind =
            json!({"destination": "/dev", "type": "bind", "source": "/dev", "options": ["rbind"]});
        assert_eq!(place(&spec(json!([bind]))), Err(NoPlace::DevNotTmpfs));
        // The last mount at /dev is the one the container sees.
        let over = json!([tmpfs_dev(&[]), bind]);
        assert_eq!(place(&spec(over)), Err(NoPlace::DevNotTmpfs));
        let odd = json!({"destination": "/dev/", "type": "tmpfs", "options": ["bind"]});
        assert_eq!(place(&spec(json!([odd]))), Err(NoPlace::DevNotTmpfs));
        let ro = tmpfs_dev(&["nosuid", "ro"]);
        assert_eq!(place(&spec(json!([ro]))), Err(NoPlace::DevReadOnly));
    }

    #[test]
    fn no_place_when_something_is_at_or_under_the_folder() {
        for taken in [
            "/dev/.eatmydata",
            "/dev/.eatmydata/libeatmydata.so",
            "/dev//.eatmydata/x/",
        ] {
            let other = json!({"destination": taken, "type": "tmpfs"});
            let with_mount = spec(json!([tmpfs_dev(&[]), other]));
            assert_eq!(place(&with_mount), Err(NoPlace::Taken), "{taken}");
            let mut masked = spec(json!([tmpfs_dev(&[])]));
            masked["linux"] = json!({ "maskedPaths": [taken] });
            assert_eq!(place(&masked), Err(NoPlace::Taken), "{taken}");
        }
        let mut read_only = spec(json!([tmpfs_dev(&[])]));
        read_only["linux"] = json!({ "readonlyPaths": ["/dev/.eatmydata"] });
        assert_eq!(place(&read_only), Err(NoPlace::Taken));
    }

    #[test]
    fn the_library_in_the_spec_is_our_bind_at_its_place() {
        let mut spec = spec(json!([tmpfs_dev(&[])]));
        assert!(!in_spec(&spec));
        spec["mounts"]
            .as_array_mut()
            .unwrap()
            .push(mount("/usr/lib/x.so"));
        assert!(in_spec(&spec));
        assert_eq!(source(&spec), Some("/usr/lib/x.so"));
        assert_eq!(place(&spec), Err(NoPlace::Taken), "never twice");
        // A user's own bind at the place is the user's: the options an
        // engine gives it are not ours.
        let mut users = self::spec(json!([tmpfs_dev(&[])]));
        for options in [
            json!(["rbind", "rprivate"]),
            json!(["rbind", "ro"]),
            Value::Null,
        ] {
            let bind = json!({"destination": MOUNTED, "type": "bind", "source": "/x.so", "options": options});
            users["mounts"].as_array_mut().unwrap().push(bind);
            assert!(!in_spec(&users));
            assert_eq!(source(&users), None);
            assert_eq!(place(&users), Err(NoPlace::Taken));
        }
        assert_eq!(
            mount("/l.so"),
            json!({"destination": MOUNTED, "type": "bind", "source": "/l.so",
                   "options": ["rbind", "ro", "nosuid", "nodev"]})
        );
    }
}
