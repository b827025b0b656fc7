//! A `run`/`create` line's options, read as docker's and podman's CLIs
//! read them (pflag, options stop at the image): what decides the way in
//! (`--runtime`, `--privileged`, a `--security-opt seccomp=...`) and
//! whatever asks to keep syncs (`EATMYDATA_KEEP` and its kin in `-e`,
//! `--env`, `--env-file`; the `io.eatmydata.keep` annotation or label).
//!
//! An option this table does not know is read as a switch; a value that
//! follows it would then be taken for the image, and what comes after it
//! for the container's command. So past such an option every word is
//! looked at for what asks to keep or forbids a profile: a false match
//! only leaves the line as it was, which is the safe answer.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use crate::protocol;

/// Options of `docker run|create` and `podman run|create` that take a
/// value (pflag reads `--name value` and `--name=value`).
const VALUED: &str = concat!(
    "add-host annotation arch attach authfile blkio-weight blkio-weight-device cap-add ",
    "cap-drop cert-dir cgroup-conf cgroup-parent cgroupns cgroups chrootdirs cidfile ",
    "conmon-pidfile cpu-count cpu-percent cpu-period cpu-quota cpu-rt-period ",
    "cpu-rt-runtime cpu-shares cpus cpuset-cpus cpuset-mems creds decryption-key ",
    "detach-keys device device-cgroup-rule device-read-bps device-read-iops ",
    "device-write-bps device-write-iops dns dns-opt dns-option dns-search domainname ",
    "entrypoint env env-file env-merge expose gidmap gpus group-add group-entry ",
    "health-cmd health-interval health-log-destination health-max-log-count ",
    "health-max-log-size health-on-failure health-retries health-start-interval ",
    "health-start-period health-startup-cmd health-startup-interval ",
    "health-startup-retries health-startup-success health-startup-timeout health-timeout ",
    "hostname hostuser image-volume init-ctr init-path io-maxbandwidth io-maxiops ip ip6 ",
    "ipc isolation kernel-memory label label-file link link-local-ip log-driver log-opt ",
    "mac-address mask memory memory-reservation memory-swap memory-swappiness mount name ",
    "net net-alias network network-alias oom-score-adj os passwd-entry personality pid ",
    "pidfile pids-limit platform pod pod-id-file preserve-fd preserve-fds publish pull ",
    "rdt-class requires restart retry retry-delay runtime sdnotify seccomp-policy secret ",
    "security-opt shm-size shm-size-systemd stop-signal stop-timeout storage-opt ",
    "subgidname subuidname sysctl systemd timeout tmpfs tz uidmap ulimit umask unmask ",
    "unsetenv user userns uts variant volume volume-driver volumes-from workdir ",
);

/// Their short names.
const SHORT_VALUED: &[u8] = b"acehlmpuvw";

/// Switches of either CLI (the rest of pflag's booleans are read as these
/// are: never with the next word).
const SWITCHES: &str = concat!(
    "detach disable-content-trust env-host help http-proxy init interactive ",
    "no-healthcheck no-hosts oom-kill-disable passwd privileged publish-all quiet ",
    "read-only read-only-tmpfs replace rm rmi rootfs sig-proxy tls-verify tty ",
    "use-api-version ",
);

/// The variables that, in a container's environment, ask to keep syncs
/// or leave it alone; a profile can do neither.
const KEEPING: [&str; 3] = [protocol::KEEP, protocol::ONLY, protocol::DISABLE];

/// Annotations and labels that do the same.
const KEEPING_NAMES: [&str; 2] = [
    crate::runtime::edit::keep::ANNOTATION,
    crate::runtime::edit::DISABLE,
];

/// The user's `--security-opt seccomp=VALUE`: the word that holds it, and
/// how much of that word comes before the value.
#[derive(Clone, Debug, PartialEq)]
pub struct SeccompOption {
    pub word: usize,
    pub prefix: usize,
    pub value: OsString,
}

/// What a `run`/`create` line says that matters here.
#[derive(Debug, Default, PartialEq)]
pub struct RunOptions {
    /// `--runtime`, the last one given.
    pub runtime: Option<OsString>,
    /// `--privileged` (not `--privileged=false`).
    pub privileged: bool,
    /// The last `seccomp` security option: the one the engine applies.
    pub seccomp: Option<SeccompOption>,
    /// What asks to keep syncs, as said to the user.
    pub keep: Option<String>,
    /// `--env-file` files, to be read for the same.
    pub env_files: Vec<OsString>,
    /// `--label-file` files, likewise.
    pub label_files: Vec<OsString>,
    /// The image, as far as the options could be told from it.
    pub image: Option<OsString>,
}

/// Reads the options of a `run`/`create` whose first option is
/// `args[from]`.
pub fn read(args: &[OsString], from: usize) -> RunOptions {
    let mut read = RunOptions::default();
    let mut unsure = false;
    let mut i = from;
    while let Some(word) = args.get(i) {
        let bytes = word.as_bytes();
        if bytes == b"--" || !bytes.starts_with(b"-") || bytes == b"-" {
            break;
        }
        let (name, value, used) = match bytes.strip_prefix(b"--") {
            Some(long) => {
                let (name, attached) = split_at_equals(long);
                let valued = listed(VALUED, name);
                unsure |= !valued && !listed(SWITCHES, name);
                match (attached, valued) {
                    (Some(value), _) => (name, Some((i, value)), 1),
                    (None, true) => (name, next(args, i), 2),
                    (None, false) => (name, None, 1),
                }
            }
            None => short(args, i),
        };
        read.take(name, value, args);
        i += used;
    }
    let at = i + usize::from(args.get(i).is_some_and(|w| w == "--"));
    read.image = args.get(at).map(|image| image.to_owned());
    if unsure {
        // Past an option not known, any word may still be an option.
        for word in args.iter().skip(i) {
            read.look_anywhere(word.as_bytes());
        }
    }
    read
}

/// An option's value: the word that holds it, and the value.
type Valued<'a> = Option<(usize, &'a [u8])>;

/// A short-option word at `i` (`-it`, `-eX=1`, `-e X=1`): the option
/// that takes a value, if any, with it.
fn short(args: &[OsString], i: usize) -> (&[u8], Valued<'_>, usize) {
    let bytes = &args[i].as_bytes()[1..];
    for (at, letter) in bytes.iter().enumerate() {
        if SHORT_VALUED.contains(letter) {
            let name = long_of(*letter);
            return match &bytes[at + 1..] {
                [] => (name, next(args, i), 2),
                [b'=', rest @ ..] | rest => (name, Some((i, rest)), 1),
            };
        }
    }
    (bytes, None, 1)
}

/// The long name of a short option that takes a value.
fn long_of(letter: u8) -> &'static [u8] {
    match letter {
        b'a' => b"attach",
        b'c' => b"cpu-shares",
        b'e' => b"env",
        b'h' => b"hostname",
        b'l' => b"label",
        b'm' => b"memory",
        b'p' => b"publish",
        b'u' => b"user",
        b'v' => b"volume",
        _ => b"workdir",
    }
}

/// Whether `name` is a word of `list`.
fn listed(list: &str, name: &[u8]) -> bool {
    list.split_whitespace().any(|word| word.as_bytes() == name)
}

fn next(args: &[OsString], i: usize) -> Valued<'_> {
    args.get(i + 1).map(|v| (i + 1, v.as_bytes()))
}

fn split_at_equals(word: &[u8]) -> (&[u8], Option<&[u8]>) {
    match word.iter().position(|&b| b == b'=') {
        Some(at) => (&word[..at], Some(&word[at + 1..])),
        None => (word, None),
    }
}

impl RunOptions {
    /// One option `name` with its value (the word's index and the value).
    fn take(&mut self, name: &[u8], value: Valued<'_>, args: &[OsString]) {
        let text = |v: &[u8]| OsStr::from_bytes(v).to_owned();
        match (name, value) {
            (b"runtime", Some((_, v))) => self.runtime = Some(text(v)),
            (b"privileged", None) => self.privileged = true,
            (b"privileged", Some((_, v))) => self.privileged = v == b"true" || v == b"1",
            (b"security-opt", Some((word, v))) => {
                let (key, rest) = seccomp_value(v);
                if key {
                    let prefix = args[word].len() - rest.len();
                    let value = text(rest);
                    self.seccomp = Some(SeccompOption {
                        word,
                        prefix,
                        value,
                    });
                }
            }
            (b"env", Some((_, v))) => self.env_entry(v, "-e"),
            (b"env-file", Some((_, v))) => self.env_files.push(text(v)),
            (b"label-file", Some((_, v))) => self.label_files.push(text(v)),
            (b"label" | b"annotation", Some((_, v))) => {
                if let Some(ours) = keeping_name(v) {
                    self.ask(format!("the {} {ours}", String::from_utf8_lossy(name)));
                }
            }
            _ => {}
        }
    }

    /// An environment entry `NAME[=VALUE]` given by `how`.
    fn env_entry(&mut self, entry: &[u8], how: &str) {
        if let Some(name) = keeping_variable(entry) {
            self.ask(format!("{name} in the container's environment ({how})"));
        }
    }

    /// Notes the first thing that asks to keep.
    fn ask(&mut self, why: String) {
        self.keep.get_or_insert(why);
    }

    /// A word past an option not known: anything that could ask to keep
    /// or forbid a profile.
    fn look_anywhere(&mut self, word: &[u8]) {
        if word == b"--privileged" || word == b"--privileged=true" {
            self.privileged = true;
        }
        let named = |names: &[&str]| {
            names
                .iter()
                .any(|n| word.windows(n.len()).any(|w| w == n.as_bytes()))
        };
        if named(&KEEPING) || named(&KEEPING_NAMES) {
            self.ask(format!(
                "'{}' on the line, past an option eatmydata does not know",
                String::from_utf8_lossy(word)
            ));
        }
        if word.starts_with(b"--security-opt") || word.starts_with(b"seccomp") {
            self.ask(format!(
                "a security option may be given past an option eatmydata does not know ('{}')",
                String::from_utf8_lossy(word)
            ));
        }
    }
}

/// `seccomp=V` or `seccomp:V` (docker's older form): whether it is one,
/// and `V`.
fn seccomp_value(value: &[u8]) -> (bool, &[u8]) {
    match value.strip_prefix(b"seccomp") {
        Some([b'=' | b':', rest @ ..]) => (true, rest),
        _ => (false, value),
    }
}

/// Whether an environment entry names a variable that keeps syncs or
/// leaves the container alone (`EATMYDATA_DISABLE=0` does not); its name.
pub fn keeping_variable(entry: &[u8]) -> Option<&'static str> {
    let (name, value) = split_at_equals(entry);
    let found = KEEPING.into_iter().find(|k| k.as_bytes() == name)?;
    let off = found == protocol::DISABLE && value.is_some_and(|v| !protocol::switch_on(v));
    (!off).then_some(found)
}

/// Whether a label or annotation entry `NAME[=VALUE]` is one of ours
/// that keeps.
pub fn keeping_name(entry: &[u8]) -> Option<&'static str> {
    let (name, _) = split_at_equals(entry);
    KEEPING_NAMES.into_iter().find(|k| k.as_bytes() == name)
}
