//! How a command will run, decided before anything runs.
//!
//! `launch` in `main.rs` first gathers what it needs from the machine
//! ([`Found`]: the library, the program and its kind, the variables it
//! reads), then [`plan`] turns the command line and those facts into a
//! [`Plan`] (what to run, the variables it gets, which seccomp filter,
//! whether eatmydata stays as its parent, what to say first), and only then
//! does `main.rs` carry it out. The plan is a value: the unit tests below
//! check each decision without running anything.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::args::Invocation;
use crate::elf::{Foreign, Kind};
use crate::error::Error;
use crate::library::Located;
use crate::seccomp::{decide, filter};
use crate::supervise::Wait;
use crate::{client, keep, preload, protocol};

/// What the plan needs from the machine, each read once by `launch`.
pub struct Found {
    /// The library, found by `library::locate`.
    pub library: Located,
    /// The program, found in `PATH` by `search::resolve`.
    pub program: PathBuf,
    /// What the program is, as far as `LD_PRELOAD` is concerned: the one
    /// the static inits it names run, if any (`target::judged`).
    pub kind: Kind,
    /// The set-id bit of the program that matters, if any.
    pub set_id: Option<&'static str>,
    /// The program judged, as named (the command, or what its inits run),
    /// and the inits that run it, outermost first.
    pub judged: OsString,
    pub through: Vec<OsString>,
    /// `LD_PRELOAD` as this process got it.
    pub ld_preload: Option<OsString>,
    /// `EATMYDATA_CLIENT_NOTICE` as this process got it.
    pub client_notice: Option<OsString>,
    /// Whether `EATMYDATA_SYNC_AT_EXIT` is on.
    pub sync_at_exit_switch: bool,
    /// Whether `/proc` is mounted here.
    pub proc_mounted: bool,
    /// The paths of `--keep` and `--only`, resolved (`keep::resolve`).
    pub keep: Vec<PathBuf>,
    pub only: Vec<PathBuf>,
    /// `EATMYDATA_KEEP` and `EATMYDATA_ONLY` as this process got them.
    pub inherited_keep: Option<OsString>,
    pub inherited_only: Option<OsString>,
    /// Whether `EATMYDATA_CHILD_FILTER` came on (an outer eatmydata's).
    pub inherited_child_filter: bool,
}

/// The values of `EATMYDATA_KEEP` and `EATMYDATA_ONLY` the command runs
/// with: ours, or those it inherited.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Kept {
    pub keep: Option<OsString>,
    pub only: Option<OsString>,
}

impl Kept {
    /// Whether they scope the eating by mount, as the library reads them
    /// (set and not empty).
    pub fn by_mount(&self) -> bool {
        [&self.keep, &self.only]
            .iter()
            .any(|value| value.as_ref().is_some_and(|v| !v.is_empty()))
    }
}

/// Which seccomp filter the command gets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Seccomp {
    /// None: the library alone.
    Off,
    /// The filter that answers every sync call itself (`--seccomp=plain`).
    Plain,
    /// The filter with its supervisor, which eatmydata serves as the
    /// command's parent; it drops `O_DIRECT` unless `keep_direct`. With
    /// `fast_fsync` the filter answers fsync and fdatasync with 0 itself
    /// (see `rules.rs`): a Go program's default. With `by_mount`, the
    /// supervisor keeps the syncs of the kept mounts ([`Kept`]), and
    /// `sync` runs as made.
    Supervised {
        keep_direct: bool,
        fast_fsync: bool,
        by_mount: bool,
    },
}

/// Whether eatmydata executes in place of the command or stays its parent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Role {
    /// `exec` in place: the command's exit status and signals are its own.
    InPlace,
    /// A parent that runs the command in a child and waits for `wait`,
    /// serving the supervisor if there is one, then tells the report and
    /// flushes, as asked.
    Parent {
        report: bool,
        sync_at_exit: bool,
        wait: Wait,
    },
}

/// How the command runs.
#[derive(Debug, PartialEq)]
pub struct Plan {
    /// The program to execute, and its `argv[0]` and arguments as given.
    pub program: PathBuf,
    pub command: OsString,
    pub args: Vec<OsString>,
    /// The variables the command gets on top of ours, in order (the
    /// parent adds the report and flush files it makes).
    pub env: Vec<(&'static str, OsString)>,
    pub seccomp: Seccomp,
    pub role: Role,
    /// What to say on stderr before the command starts, one line each,
    /// after `eatmydata: `.
    pub notices: Vec<String>,
    /// `--verbose`: the flush at exit says what it did even when all went well.
    pub verbose: bool,
    /// Keep by mount, for the supervisor.
    pub kept: Kept,
}

/// The plan for `invocation`, given what was found.
pub fn plan(invocation: Invocation, found: Found) -> Result<Plan, Error> {
    let preload = preload::with_library(&found.library.path, found.ld_preload.as_deref())?;
    let decision = decide::decide(invocation.seccomp, &found.judged, found.kind, found.set_id);
    let kept = Kept {
        keep: if found.keep.is_empty() {
            found.inherited_keep.clone()
        } else {
            Some(keep::value(found.inherited_keep.as_deref(), &found.keep))
        },
        only: if found.only.is_empty() {
            found.inherited_only.clone()
        } else {
            Some(keep::value(None, &found.only))
        },
    };
    let by_mount = kept.by_mount();
    // The supervisor decides from the program's /proc files: without them,
    // the plain filter, and said unless it was asked for. The plain filter
    // answers every sync itself: with kept mounts, no filter at all.
    let seccomp = match (decision.seccomp, invocation.plain_seccomp) {
        (false, _) => Seccomp::Off,
        (true, true) if by_mount => return Err(Error::Usage(PLAIN_BY_MOUNT.into())),
        (true, true) => Seccomp::Plain,
        (true, false) if !found.proc_mounted && by_mount => Seccomp::Off,
        (true, false) if !found.proc_mounted => Seccomp::Plain,
        (true, false) => Seccomp::Supervised {
            keep_direct: invocation.keep_direct,
            fast_fsync: found.kind == Kind::Go && !by_mount,
            by_mount,
        },
    };
    // A sanitizer-linked program is a test whose error output is often
    // compared: why it runs in seccomp mode is said by -v alone.
    let quiet = found.kind == Kind::Foreign(Foreign::Sanitizer) && !invocation.verbose;
    let mut notices = if quiet { vec![] } else { decision.notices };
    if decision.seccomp && !invocation.plain_seccomp && !found.proc_mounted {
        notices.push(if by_mount {
            decide::NO_PROC_BY_MOUNT_NOTICE.to_owned()
        } else {
            decide::NO_PROC_NOTICE.to_owned()
        });
    }
    if by_mount && decision.seccomp && found.proc_mounted && !quiet {
        notices.push(decide::BY_MOUNT_NOTICE.to_owned());
    }
    notices.extend(client::notice(
        &invocation.command,
        found.client_notice.as_deref(),
    ));
    // Not into a program whose loader would refuse it, or die of it. A
    // static program's own execs never pass through the library, so what
    // it starts would inherit LD_PRELOAD unchecked (an i386 child prints
    // the loader's error): where the filter covers its children, it goes
    // without, by the rule of durability/exec.rs; with no filter, the
    // library is all its children have.
    let preloaded = match found.kind {
        Kind::Foreign(_) => false,
        Kind::Static => matches!(seccomp, Seccomp::Off),
        _ => true,
    };
    // A child that goes without the library gets the plain filter from
    // the library, where nothing else answers its syncs: not with
    // --no-seccomp, nor with kept mounts, whose syncs it would eat.
    let child_filter = preloaded
        && seccomp == Seccomp::Off
        && !by_mount
        && invocation.seccomp != decide::Choice::Off;
    if invocation.verbose {
        if let Some(init) = found.through.last() {
            notices.push(format!(
                "{} runs {}, judged in its place",
                init.to_string_lossy(),
                found.judged.to_string_lossy()
            ));
        }
        for (place, why) in &found.library.passed {
            notices.push(format!("passed over {}: {why}", place.display()));
        }
        notices.push(running(&found, preloaded, seccomp));
    }
    let mut env = Vec::new();
    if preloaded {
        env.push((preload::VARIABLE, preload));
    }
    if invocation.keep_direct {
        env.push((protocol::KEEP_DIRECT, protocol::ON.into()));
    }
    if let (false, Some(value)) = (found.keep.is_empty(), &kept.keep) {
        env.push((protocol::KEEP, value.clone()));
    }
    if let (false, Some(value)) = (found.only.is_empty(), &kept.only) {
        env.push((protocol::ONLY, value.clone()));
    }
    if child_filter {
        let value = match invocation.verbose {
            true => protocol::CHILD_FILTER_TELL,
            false => protocol::ON,
        };
        env.push((protocol::CHILD_FILTER, value.into()));
    } else if found.inherited_child_filter {
        env.push((protocol::CHILD_FILTER, "0".into()));
    }
    let sync_at_exit = invocation.sync_at_exit || found.sync_at_exit_switch;
    let supervised = matches!(seccomp, Seccomp::Supervised { .. });
    let role = if invocation.report || sync_at_exit || supervised {
        Role::Parent {
            report: invocation.report,
            sync_at_exit,
            wait: if sync_at_exit {
                Wait::Tree
            } else {
                Wait::Command
            },
        }
    } else {
        Role::InPlace
    };
    Ok(Plan {
        program: found.program,
        command: invocation.command,
        args: invocation.args,
        env,
        seccomp,
        role,
        notices,
        verbose: invocation.verbose,
        kept,
    })
}

/// Why `--seccomp=plain` and keep by mount do not go together.
const PLAIN_BY_MOUNT: &str = "--seccomp=plain answers every sync itself and cannot keep any by mount (--keep, --only, EATMYDATA_KEEP, EATMYDATA_ONLY): use --seccomp";

/// The `--verbose` line: what runs, with what.
fn running(found: &Found, preloaded: bool, seccomp: Seccomp) -> String {
    let with = if preloaded {
        format!(
            "with {} preloaded ({})",
            found.library.path.display(),
            found.library.source
        )
    } else {
        "without the library".to_owned()
    };
    let filter = match seccomp {
        Seccomp::Off => String::new(),
        Seccomp::Plain => format!(" and the seccomp filter ({})", filter::abi_names()),
        Seccomp::Supervised { .. } => format!(
            " and the seccomp filter ({}) and its supervisor",
            filter::abi_names()
        ),
    };
    format!("running {} {with}{filter}", found.program.display())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{self, Action};
    use crate::library::Source;

    /// The plan for the command line `argv` (after `eatmydata`) and a
    /// program of `kind`, on a machine with nothing special.
    fn plan_for(argv: &[&str], kind: Kind, found: impl FnOnce(&mut Found)) -> Plan {
        try_plan(argv, kind, found).unwrap()
    }

    /// [`plan_for`], which may be refused.
    fn try_plan(argv: &[&str], kind: Kind, found: impl FnOnce(&mut Found)) -> Result<Plan, Error> {
        let argv = ["eatmydata"].iter().chain(argv).map(OsString::from);
        let Ok(Action::Run(invocation)) = args::parse(argv) else {
            panic!("not a command line that runs a command");
        };
        let mut facts = Found {
            library: Located {
                path: "/lib/eatmydata/libeatmydata.so".into(),
                source: Source::Installed,
                passed: Vec::new(),
            },
            program: "/usr/bin/prog".into(),
            kind,
            set_id: None,
            judged: "prog".into(),
            through: Vec::new(),
            ld_preload: None,
            client_notice: None,
            sync_at_exit_switch: false,
            proc_mounted: true,
            keep: Vec::new(),
            only: Vec::new(),
            inherited_keep: None,
            inherited_only: None,
            inherited_child_filter: false,
        };
        found(&mut facts);
        plan(invocation, facts)
    }

    #[test]
    fn a_dynamic_program_runs_in_place_with_the_library_first() {
        let plan = plan_for(&["prog", "-x"], Kind::Dynamic, |found| {
            found.ld_preload = Some("other.so".into());
        });
        assert_eq!(plan.program, PathBuf::from("/usr/bin/prog"));
        assert_eq!((plan.command.to_str(), plan.args.len()), (Some("prog"), 1));
        let preload = "/lib/eatmydata/libeatmydata.so:other.so";
        let child_filter = (protocol::CHILD_FILTER, protocol::ON.into());
        assert_eq!(
            plan.env,
            [(preload::VARIABLE, preload.into()), child_filter]
        );
        assert_eq!((plan.seccomp, plan.role), (Seccomp::Off, Role::InPlace));
        assert!(plan.notices.is_empty(), "{:?}", plan.notices);
    }

    /// The library gives a child that goes without it the plain filter
    /// only where nothing else answers its syncs, and says so under -v.
    #[test]
    fn a_child_without_the_library_gets_the_plain_filter_where_nothing_else_answers() {
        let asked = |plan: &Plan| {
            let found = plan
                .env
                .iter()
                .find(|(name, _)| *name == protocol::CHILD_FILTER);
            found.map(|(_, value)| value.to_str().unwrap().to_owned())
        };
        let dynamic = |argv: &[&str]| plan_for(argv, Kind::Dynamic, |_| {});
        assert_eq!(asked(&dynamic(&["prog"])).as_deref(), Some(protocol::ON));
        let verbose = dynamic(&["-v", "prog"]);
        assert_eq!(
            asked(&verbose).as_deref(),
            Some(protocol::CHILD_FILTER_TELL)
        );
        // Not with --no-seccomp, nor where the command's filter covers the
        // tree, nor with kept mounts, nor for a static command.
        assert_eq!(asked(&dynamic(&["--no-seccomp", "prog"])), None);
        assert_eq!(asked(&dynamic(&["--seccomp", "prog"])), None);
        let kept = plan_for(&["prog"], Kind::Dynamic, |found| {
            found.inherited_keep = Some("/srv".into());
        });
        assert_eq!(asked(&kept), None);
        assert_eq!(asked(&plan_for(&["prog"], Kind::Static, |_| {})), None);
        // An outer eatmydata's switch is turned off where this one's is.
        let nested = plan_for(&["--no-seccomp", "prog"], Kind::Dynamic, |found| {
            found.inherited_child_filter = true;
        });
        assert_eq!(asked(&nested).as_deref(), Some("0"));
    }

    #[test]
    fn a_program_that_enters_its_own_rings_gets_the_library_and_the_supervisor() {
        let plan = plan_for(&["fio"], Kind::EntersUring, |_| {});
        let preload = "/lib/eatmydata/libeatmydata.so";
        assert_eq!(plan.env, [(preload::VARIABLE, preload.into())]);
        let supervised = Seccomp::Supervised {
            keep_direct: false,
            fast_fsync: false,
            by_mount: false,
        };
        assert_eq!(plan.seccomp, supervised);
        assert!(
            plan.notices[0].contains("io_uring_enter"),
            "{:?}",
            plan.notices
        );
        let off = plan_for(&["--no-seccomp", "fio"], Kind::EntersUring, |_| {});
        assert_eq!(off.seccomp, Seccomp::Off);
        assert_eq!(off.env, [(preload::VARIABLE, preload.into())]);
        assert!(off.notices.is_empty(), "{:?}", off.notices);
    }

    #[test]
    fn a_static_program_gets_the_supervised_filter_and_a_parent() {
        let plan = plan_for(&["prog"], Kind::Static, |_| {});
        let supervised = Seccomp::Supervised {
            keep_direct: false,
            fast_fsync: false,
            by_mount: false,
        };
        assert_eq!(plan.seccomp, supervised);
        let parent = Role::Parent {
            report: false,
            sync_at_exit: false,
            wait: Wait::Command,
        };
        assert_eq!(plan.role, parent);
        assert!(
            plan.notices[0].contains("statically linked"),
            "{:?}",
            plan.notices
        );
    }

    #[test]
    fn the_plain_filter_executes_in_place() {
        let plan = plan_for(&["--seccomp=plain", "prog"], Kind::Static, |found| {
            found.proc_mounted = false;
        });
        assert_eq!((plan.seccomp, plan.role), (Seccomp::Plain, Role::InPlace));
        assert!(!plan.notices.contains(&decide::NO_PROC_NOTICE.to_owned()));
    }

    #[test]
    fn without_proc_the_plain_filter_is_used_and_said() {
        let plan = plan_for(&["prog"], Kind::Static, |found| {
            found.proc_mounted = false;
        });
        assert_eq!((plan.seccomp, plan.role), (Seccomp::Plain, Role::InPlace));
        assert!(plan.notices.contains(&decide::NO_PROC_NOTICE.to_owned()));
    }

    #[test]
    fn report_and_sync_at_exit_keep_a_parent_that_waits_for_the_tree() {
        let plan = plan_for(&["--report", "prog"], Kind::Dynamic, |found| {
            found.sync_at_exit_switch = true;
        });
        let parent = Role::Parent {
            report: true,
            sync_at_exit: true,
            wait: Wait::Tree,
        };
        assert_eq!((plan.seccomp, plan.role), (Seccomp::Off, parent));
    }

    #[test]
    fn keep_direct_reaches_the_library_and_the_supervisor() {
        let plan = plan_for(&["--keep-direct", "--seccomp", "prog"], Kind::Go, |_| {});
        assert_eq!(plan.env[1], (protocol::KEEP_DIRECT, protocol::ON.into()));
        let fast = Seccomp::Supervised {
            keep_direct: true,
            fast_fsync: true,
            by_mount: false,
        };
        assert_eq!(plan.seccomp, fast);
    }

    #[test]
    fn only_a_go_program_gets_fsync_answered_by_the_filter() {
        let plan = plan_for(&["prog"], Kind::Go, |_| {});
        let fast = Seccomp::Supervised {
            keep_direct: false,
            fast_fsync: true,
            by_mount: false,
        };
        assert_eq!(plan.seccomp, fast);
        let exact = Seccomp::Supervised {
            keep_direct: false,
            fast_fsync: false,
            by_mount: false,
        };
        for kind in [Kind::Static, Kind::Dynamic] {
            let plan = plan_for(&["--seccomp", "prog"], kind, |_| {});
            assert_eq!(
                plan.seccomp, exact,
                "{kind:?}: a C program's syncs are exact"
            );
        }
    }

    #[test]
    fn kept_mounts_reach_the_library_and_the_supervisor() {
        let plan = plan_for(&["prog"], Kind::Go, |found| {
            found.keep = vec!["/b".into()];
            found.inherited_keep = Some("/srv".into());
            found.inherited_only = Some("/a".into());
        });
        assert_eq!(plan.env[1], (protocol::KEEP, "/srv:/b".into()));
        assert_eq!(
            plan.env.len(),
            2,
            "the inherited EATMYDATA_ONLY is passed on as it is"
        );
        assert_eq!(plan.kept.only, Some("/a".into()));
        let by_mount = Seccomp::Supervised {
            keep_direct: false,
            fast_fsync: false,
            by_mount: true,
        };
        assert_eq!(plan.seccomp, by_mount, "a Go program's fsyncs too");
        assert!(plan.notices.contains(&decide::BY_MOUNT_NOTICE.to_owned()));
        let only = plan_for(&["prog"], Kind::Static, |found| {
            found.only = vec!["/a".into(), "/c".into()];
            found.inherited_only = Some("/old".into());
        });
        // Its children are under the supervisor's filter: no LD_PRELOAD.
        assert_eq!(only.env, [(protocol::ONLY, "/a:/c".into())]);
        assert!(matches!(
            only.seccomp,
            Seccomp::Supervised { by_mount: true, .. }
        ));
        let dynamic = plan_for(&["prog"], Kind::Dynamic, |found| {
            found.inherited_keep = Some("/b".into());
        });
        assert_eq!(dynamic.seccomp, Seccomp::Off);
        assert!(dynamic.notices.is_empty(), "{:?}", dynamic.notices);
    }

    #[test]
    fn with_kept_mounts_a_static_program_gets_the_supervisor_or_nothing() {
        let keep = |found: &mut Found| found.keep = vec!["/b".into()];
        let refused = try_plan(&["--seccomp=plain", "prog"], Kind::Static, keep).unwrap_err();
        assert_eq!(refused.exit_code(), 2);
        assert!(refused.to_string().contains("--seccomp=plain"), "{refused}");
        let bare = plan_for(&["prog"], Kind::Static, |found| {
            keep(found);
            found.proc_mounted = false;
        });
        assert_eq!((bare.seccomp, bare.role), (Seccomp::Off, Role::InPlace));
        assert!(
            bare.notices
                .contains(&decide::NO_PROC_BY_MOUNT_NOTICE.to_owned())
        );
    }

    #[test]
    fn a_foreign_program_gets_no_library() {
        let plan = plan_for(&["-v", "prog"], Kind::Foreign(Foreign::Bits32), |_| {});
        assert!(plan.env.is_empty(), "{:?}", plan.env);
        let running = plan.notices.last().unwrap();
        assert!(running.starts_with("running /usr/bin/prog without the library"));
    }

    /// `eatmydata ./asan-program` exited 1 ("ASan runtime does not come
    /// first in initial library list"): seccomp mode instead, said.
    #[test]
    fn a_sanitizer_program_gets_seccomp_mode_instead_of_the_library() {
        let plan = plan_for(&["-v", "prog"], Kind::Foreign(Foreign::Sanitizer), |_| {});
        assert!(plan.env.is_empty(), "{:?}", plan.env);
        let supervised = Seccomp::Supervised {
            keep_direct: false,
            fast_fsync: false,
            by_mount: false,
        };
        assert_eq!(plan.seccomp, supervised);
        assert!(plan.notices[0].contains("sanitizer"), "{:?}", plan.notices);
        let running = plan.notices.last().unwrap();
        assert!(running.starts_with("running /usr/bin/prog without the library and the seccomp"));
        // Without -v, its error output stays its own.
        let quiet = plan_for(&["prog"], Kind::Foreign(Foreign::Sanitizer), |_| {});
        assert_eq!(quiet.seccomp, supervised);
        assert!(quiet.notices.is_empty(), "{:?}", quiet.notices);
    }

    #[test]
    fn verbose_says_which_library_and_whence() {
        let plan = plan_for(&["-v", "prog"], Kind::Dynamic, |found| {
            found.library.source = Source::Override;
        });
        assert_eq!(
            plan.notices.last().unwrap(),
            "running /usr/bin/prog with /lib/eatmydata/libeatmydata.so preloaded \
             (from EATMYDATA_LIBRARY)"
        );
    }

    #[test]
    fn verbose_names_the_copies_passed_over() {
        let plan = plan_for(&["-v", "prog"], Kind::Dynamic, |found| {
            found.library.source = Source::Home { written: false };
            found.library.passed = vec![(
                PathBuf::from("/tmp/lib/libeatmydata.so"),
                "/tmp is writable by every user".into(),
            )];
        });
        assert_eq!(
            plan.notices,
            [
                "passed over /tmp/lib/libeatmydata.so: /tmp is writable by every user",
                "running /usr/bin/prog with /lib/eatmydata/libeatmydata.so preloaded \
                 (the copy in root's home)"
            ]
        );
        let quiet = plan_for(&["prog"], Kind::Dynamic, |found| {
            found.library.passed = vec![(PathBuf::from("/x"), "why".into())];
        });
        assert!(quiet.notices.is_empty(), "{:?}", quiet.notices);
    }

    #[test]
    fn a_client_gets_its_note_unless_silenced() {
        let plan = plan_for(&["psql"], Kind::Dynamic, |_| {});
        assert!(plan.notices[0].starts_with("psql is a database client"));
        let plan = plan_for(&["psql"], Kind::Dynamic, |found| {
            found.client_notice = Some("0".into());
        });
        assert!(plan.notices.is_empty());
    }

    #[test]
    fn a_library_path_the_loader_would_split_is_refused() {
        let odd = try_plan(&["prog"], Kind::Dynamic, |found| {
            found.library.path = "/odd:path/libeatmydata.so".into();
        });
        assert!(matches!(odd, Err(Error::LibraryPath(_))));
    }
}
