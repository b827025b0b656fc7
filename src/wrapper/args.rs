//! The command line: `eatmydata [OPTIONS] [--] COMMAND [ARGS]...`, or, run
//! through a link named after a command, `COMMAND [ARGS]...`.
//!
//! Options end at the first argument that is not one, as in `env(1)`:
//! everything from the command on is the command's, untouched.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::error::Error;
use crate::seccomp::decide::Choice;

pub const HELP: &str = "\
Usage: eatmydata [OPTIONS] [--] COMMAND [ARGS]...
       eatmydata profile docker|podman [PROFILE-OPTIONS]
Run COMMAND with fsync and the other requests for durability made free.

The command runs with libeatmydata.so preloaded: fsync, fdatasync, sync,
syncfs, sync_file_range and msync return at once, and O_SYNC, O_DSYNC,
O_DIRECT, RWF_SYNC and RWF_DSYNC are dropped. Data reaches the disk when
the kernel writes it back: a crash or power loss before then loses it, a
clean shutdown does not.

The library also rewrites io_uring requests made through liburing or
syscall(), but not those a program enters the kernel with itself (fio).
Statically linked programs and every Go program make their system calls
themselves and never see the library. For them, for a program whose own
code enters io_uring (fio), and with --seccomp for
any command, a seccomp filter, with eatmydata staying as COMMAND's parent
to answer it, makes most of these requests free in COMMAND and everything
it starts: the sync calls on files of a disk, io_uring fsyncs, and the
sync flags of openat2 and of io_uring entries. The sync flags of open,
openat and pwritev2 sit in a register no filter can change: those writes
reach the disk. For a Go program the filter answers fsync and fdatasync
with 0 itself, on any descriptor but a negative one. It is turned on by
itself when COMMAND is such a program, and said so on stderr.

Options:
  -v, --verbose      say on stderr what is run, and with which library
                     (and where that came from)
      --keep-direct  keep O_DIRECT (sets EATMYDATA_KEEP_DIRECT=1)
      --seccomp      install the seccomp filter too, whatever COMMAND is
                     (this covers io_uring entered without liburing)
      --seccomp=plain  the filter alone, without its supervisor: syncs
                     answered 0, flags and io_uring not covered
      --no-seccomp   never install it, not even for a static or Go program
      --report       run COMMAND as a child, and when it ends say what the
                     library skipped in it and in everything it started,
                     and an estimate of the time that saved: on each file
                     system where flushes were skipped, 16 flushes of a
                     scratch file are timed (that costs 16 real flushes)
      --print-library
                     print the path of libeatmydata.so and exit (writing
                     out the copy this command carries when that is the one
                     used), for scripts that mount it into a container (one
                     library serves glibc and musl programs alike)
      --sync-at-exit run COMMAND as a child; when it and everything it
                     started have ended, flush the file systems where a
                     sync was skipped (syncfs, or sync when it cannot tell),
                     then exit with COMMAND's status (125 if it succeeded
                     but a flush failed)
      --keep PATH    keep the syncs on the mount that holds PATH: they reach
                     the disk, the others are eaten (repeatable; sets
                     EATMYDATA_KEEP, adding to one already set)
      --only PATH    eat the syncs only on the mount that holds PATH: all
                     others reach the disk (repeatable; sets EATMYDATA_ONLY)
      --runtime ARGS...
                     be the OCI runtime eatmydata-runtime with ARGS, for a
                     copy of this command without that link beside it:
                     'eatmydata --runtime configure docker' registers it
                     (and makes the link); 'eatmydata --runtime --help'
  -h, --help         print this help and exit
  -V, --version      print the version and the SHA-256 of the library this
                     command carries, and exit

Under a name without eatmydata in it (a link or a copy named dpkg), it
runs that command from later in PATH, as if run as eatmydata dpkg.

'eatmydata profile docker' (or podman) prints a seccomp profile: the
engine's default with the sync calls answered 0, for containers whose
engine no runtime can be added to (Docker Desktop, a remote engine), to
send with the container's create request. 'eatmydata profile --help' says
more. A command named profile runs as 'eatmydata -- profile'.

Environment:
  EATMYDATA_LIBRARY      path of libeatmydata.so, instead of looking for it
                         (beside the command, in its prefix, then the copy
                         it carries, written out in TMPDIR or /tmp)
  EATMYDATA_DISABLE=1    make the library a pass-through, here and below
  EATMYDATA_KEEP_DIRECT=1  keep O_DIRECT
  EATMYDATA_REPORT=FILE  where processes append their counts (--report sets it)
  EATMYDATA_SYNC_AT_EXIT=1  as --sync-at-exit (for symlink mode)
  EATMYDATA_KEEP=PATH:...  as --keep, for each PATH (absolute)
  EATMYDATA_ONLY=PATH:...  as --only, for each PATH (absolute)
  EATMYDATA_CLIENT_NOTICE=0  no note when COMMAND is a database client
                         (mysql, psql, ...), whose server makes the syncs

--keep and --only decide each sync by the mount of its file (a bind mount
is a mount of its own): 'eatmydata --keep /srv/db make test' eats the
build's syncs and keeps the database's. A static or Go program gets them
from the seccomp supervisor, or, where it cannot run, no filter at all
(said on stderr); sync() becomes a syncfs of each kept mount. See
docs/sync-at-exit.md.
An entry of EATMYDATA_KEEP or EATMYDATA_ONLY that is relative, empty (a
stray ':') or names no mount keeps every sync: -v and --report say which.

--sync-at-exit is for a command whose own processes write what must last:
a script that starts a database server, loads a dump and stops it; apt; a
test suite with SQLite. The work runs at eatmydata's speed, and the data is
on the disk when eatmydata returns, for the price of one flush at the end.
A server run as a service is outside any command: see eatmydata(1).

Exit status: the command's; 2 for bad usage, 125 when eatmydata fails,
126 when COMMAND cannot be run, 127 when it is not found.
";

/// What the command line asks for.
#[derive(Debug, PartialEq)]
pub enum Action {
    Help,
    Version,
    PrintLibrary,
    /// `--runtime ARGS...`: the runtime's face, with these arguments.
    Runtime(Vec<OsString>),
    /// `profile ARGS...` as the first argument: a seccomp profile.
    Profile(Vec<OsString>),
    Run(Invocation),
}

/// A command to run, and how.
#[derive(Debug, PartialEq)]
pub struct Invocation {
    pub command: OsString,
    pub args: Vec<OsString>,
    pub verbose: bool,
    pub keep_direct: bool,
    pub seccomp: Choice,
    /// `--seccomp=plain`: the filter without the supervisor.
    pub plain_seccomp: bool,
    pub report: bool,
    pub sync_at_exit: bool,
    /// `--keep PATH`, in order: the mounts whose syncs are kept.
    pub keep: Vec<OsString>,
    /// `--only PATH`, in order: the only mounts whose syncs are eaten.
    pub only: Vec<OsString>,
}

/// Whether we run as ourselves: under any name that contains `eatmydata`
/// (`eatmydata-rs`, `ours-eatmydata`, Homebrew's link named `eatmydata`);
/// any other name, link or copy, is a command's (symlink mode).
fn is_our_name(argv0: &OsStr) -> bool {
    let name = Path::new(argv0).file_name().unwrap_or(argv0);
    name.as_bytes()
        .windows(OUR_NAME.len())
        .any(|part| part == OUR_NAME)
}

const OUR_NAME: &[u8] = b"eatmydata";

pub fn parse(argv: impl IntoIterator<Item = OsString>) -> Result<Action, Error> {
    let mut argv = argv.into_iter();
    let argv0 = argv.next().unwrap_or_default();
    if !argv0.is_empty() && !is_our_name(&argv0) {
        let command = Path::new(&argv0).file_name().unwrap_or(&argv0).to_owned();
        return Ok(Action::Run(Invocation {
            command,
            args: argv.collect(),
            verbose: false,
            keep_direct: false,
            seccomp: Choice::Auto,
            plain_seccomp: false,
            report: false,
            sync_at_exit: false,
            keep: Vec::new(),
            only: Vec::new(),
        }));
    }
    let (mut verbose, mut keep_direct, mut seccomp) = (false, false, Choice::Auto);
    let (mut report, mut sync_at_exit, mut plain_seccomp) = (false, false, false);
    let (mut keep, mut only) = (Vec::new(), Vec::new());
    let mut argv = argv.peekable();
    // `profile` first is ours; a command of that name runs after `--`.
    if argv.next_if(|arg| arg == "profile").is_some() {
        return Ok(Action::Profile(argv.collect()));
    }
    let command = loop {
        let Some(arg) = argv.next() else {
            return Err(Error::Usage("no command given".into()));
        };
        match arg.as_bytes() {
            b"--" => match argv.next() {
                Some(command) => break command,
                None => return Err(Error::Usage("no command given".into())),
            },
            b"-h" | b"--help" => return Ok(Action::Help),
            b"-V" | b"--version" => return Ok(Action::Version),
            b"--print-library" => return Ok(Action::PrintLibrary),
            b"--runtime" => return Ok(Action::Runtime(argv.collect())),
            b"-v" | b"--verbose" => verbose = true,
            b"--keep-direct" => keep_direct = true,
            b"--seccomp" => (seccomp, plain_seccomp) = (Choice::On, false),
            b"--seccomp=plain" => (seccomp, plain_seccomp) = (Choice::On, true),
            b"--no-seccomp" => seccomp = Choice::Off,
            b"--report" => report = true,
            b"--sync-at-exit" => sync_at_exit = true,
            b"--keep" => keep.push(value_of("--keep", &mut argv)?),
            b"--only" => only.push(value_of("--only", &mut argv)?),
            [b'-', b'-', b'k', b'e', b'e', b'p', b'=', path @ ..] => {
                keep.push(OsStr::from_bytes(path).to_owned());
            }
            [b'-', b'-', b'o', b'n', b'l', b'y', b'=', path @ ..] => {
                only.push(OsStr::from_bytes(path).to_owned());
            }
            [b'-', _, ..] => {
                return Err(Error::Usage(format!(
                    "unknown option '{}'",
                    arg.to_string_lossy()
                )));
            }
            _ => break arg,
        }
    };
    Ok(Action::Run(Invocation {
        command,
        args: argv.collect(),
        verbose,
        keep_direct,
        seccomp,
        plain_seccomp,
        report,
        sync_at_exit,
        keep,
        only,
    }))
}

/// The argument after an option that takes one (`--keep PATH`).
fn value_of(option: &str, argv: &mut impl Iterator<Item = OsString>) -> Result<OsString, Error> {
    argv.next()
        .ok_or_else(|| Error::Usage(format!("option '{option}' needs a path")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Action, Error> {
        parse(args.iter().map(OsString::from))
    }

    fn run(command: &str, args: &[&str]) -> Action {
        Action::Run(Invocation {
            command: command.into(),
            args: args.iter().map(OsString::from).collect(),
            verbose: false,
            keep_direct: false,
            seccomp: Choice::Auto,
            plain_seccomp: false,
            report: false,
            sync_at_exit: false,
            keep: Vec::new(),
            only: Vec::new(),
        })
    }

    #[test]
    fn options_stop_at_the_command() {
        assert_eq!(
            parse_strs(&["eatmydata", "ls", "-l", "--help"]).unwrap(),
            run("ls", &["-l", "--help"])
        );
        assert_eq!(
            parse_strs(&["eatmydata", "--", "-x", "-v"]).unwrap(),
            run("-x", &["-v"])
        );
    }

    #[test]
    fn options_set_the_invocation() {
        let Action::Run(invocation) = parse_strs(&[
            "eatmydata",
            "-v",
            "--keep-direct",
            "--report",
            "--sync-at-exit",
            "true",
        ])
        .unwrap() else {
            panic!("expected a command to run");
        };
        assert!(invocation.verbose && invocation.keep_direct && invocation.report);
        assert!(invocation.sync_at_exit);
        assert_eq!(
            parse_strs(&["eatmydata", "--help", "x"]).unwrap(),
            Action::Help
        );
        assert_eq!(
            parse_strs(&["/usr/bin/eatmydata", "-V"]).unwrap(),
            Action::Version
        );
        assert_eq!(
            parse_strs(&["eatmydata", "--print-library"]).unwrap(),
            Action::PrintLibrary
        );
        assert_eq!(
            parse_strs(&["eatmydata", "-v", "--runtime", "configure", "-v"]).unwrap(),
            Action::Runtime(vec!["configure".into(), "-v".into()])
        );
    }

    #[test]
    fn the_last_seccomp_option_wins() {
        let choice = |args: &[&str]| match parse_strs(args).unwrap() {
            Action::Run(invocation) => invocation.seccomp,
            other => panic!("expected a command, got {other:?}"),
        };
        assert_eq!(choice(&["eatmydata", "true"]), Choice::Auto);
        assert_eq!(choice(&["eatmydata", "--seccomp", "true"]), Choice::On);
        assert_eq!(choice(&["eatmydata", "--no-seccomp", "true"]), Choice::Off);
        assert_eq!(
            choice(&["eatmydata", "--no-seccomp", "--seccomp", "true"]),
            Choice::On
        );
        assert_eq!(choice(&["eatmydata", "true", "--seccomp"]), Choice::Auto);
    }

    #[test]
    fn keep_and_only_repeat_in_order() {
        let Action::Run(invocation) = parse_strs(&[
            "eatmydata",
            "--keep",
            "/b",
            "--only=/a",
            "--keep=/c d",
            "--only",
            "--keep",
            "ls",
            "--keep",
        ])
        .unwrap() else {
            panic!("expected a command to run");
        };
        assert_eq!(invocation.keep, ["/b", "/c d"]);
        assert_eq!(invocation.only, ["/a", "--keep"]);
        assert_eq!(invocation.command, "ls");
        assert_eq!(invocation.args, ["--keep"]);
    }

    #[test]
    fn bad_usage_is_an_error() {
        for args in [
            &["eatmydata"][..],
            &["eatmydata", "-v"],
            &["eatmydata", "--"],
            &["eatmydata", "--bogus", "ls"],
            &["eatmydata", "--keep"],
            &["eatmydata", "--only", "/a"],
            &["eatmydata", "--keeps", "/a", "ls"],
        ] {
            let error = parse_strs(args).unwrap_err();
            assert_eq!(error.exit_code(), 2, "{args:?}");
        }
    }

    #[test]
    fn a_link_named_after_a_command_runs_it() {
        assert_eq!(
            parse_strs(&["/usr/local/bin/dpkg", "-i", "x.deb"]).unwrap(),
            run("dpkg", &["-i", "x.deb"])
        );
        assert_eq!(
            parse_strs(&["dpkg", "--help"]).unwrap(),
            run("dpkg", &["--help"])
        );
    }

    #[test]
    fn any_name_with_eatmydata_in_it_is_ours() {
        for argv0 in [
            "eatmydata",
            "/opt/homebrew/bin/eatmydata",
            "eatmydata-rs",
            "./ours-eatmydata",
            "my.eatmydata.old",
        ] {
            assert_eq!(
                parse_strs(&[argv0, "-V"]).unwrap(),
                Action::Version,
                "{argv0}"
            );
        }
        for argv0 in ["dpkg", "/usr/local/bin/apt-get", "eatmy", "eat-my-data"] {
            assert_eq!(
                parse_strs(&[argv0, "-V"]).unwrap(),
                run(
                    Path::new(argv0).file_name().unwrap().to_str().unwrap(),
                    &["-V"]
                ),
                "{argv0}"
            );
        }
    }

    #[test]
    fn arguments_pass_byte_for_byte() {
        use std::os::unix::ffi::OsStringExt;
        let odd = OsString::from_vec(vec![0xff, b' ', 0xfe]);
        let argv = vec![
            "eatmydata".into(),
            "cmd".into(),
            odd.clone(),
            OsString::new(),
        ];
        let Action::Run(invocation) = parse(argv).unwrap() else {
            panic!("expected a command")
        };
        assert_eq!(invocation.args, vec![odd, OsString::new()]);
    }
}
