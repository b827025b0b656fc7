//! `eatmydata`: runs a command with libeatmydata.so preloaded.
//!
//! `eatmydata [OPTIONS] [--] COMMAND [ARGS]...` in the habits of `env(1)`:
//! the command is found in `PATH` and executed in place of this process,
//! with its arguments byte for byte, so its exit status and its death by a
//! signal are its own. Run through a link named after a command
//! (`/usr/local/bin/dpkg -> eatmydata`), it runs that command from later in
//! `PATH` instead.
//!
//! A statically linked or Go program, which `LD_PRELOAD` cannot reach, gets
//! a seccomp filter as well (`--seccomp` asks for it, `--no-seccomp` not);
//! see `seccomp/decide.rs`.
//!
//! Run as `eatmydata-runtime` (a link or a copy), it is an OCI runtime
//! instead: see `runtime/mod.rs`.
//!
//! `no_main`: the Rust runtime would set SIGPIPE to be ignored before `main`,
//! and the command would inherit that; `env(1)` passes on what it was given.

#![cfg_attr(not(test), no_main)]
// Unit tests replace the entry point, which leaves the rest unreachable there.
#![cfg_attr(test, allow(dead_code))]

mod args;
mod client;
#[allow(dead_code)] // sqe::ADDR3, a layout fact only its tests read
#[path = "../durability.rs"]
mod durability;
mod error;
mod estimate;
mod exec;
mod flush;
mod keep;
mod library;
mod mounts;
mod plan;
mod preload;
mod profile;
#[allow(dead_code)] // the writers and DISABLE, which only the library uses
#[path = "../protocol.rs"]
mod protocol;
mod real;
mod report;
mod runtime;
mod scratch;
mod search;
mod seccomp;
mod supervise;
mod target;

use args::{Action, Invocation};
use eatmydata_elf as elf;
use error::Error;
use plan::{Plan, Role, Seccomp};
use seccomp::handoff::{self, Handoff};
use seccomp::{decide, filter};

/// The C entry point, called by libc with the signal dispositions intact.
#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(argc: std::ffi::c_int, argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    // Read here rather than through std::env::args_os(), which under
    // no_main is filled only where libc passes them to .init_array (glibc,
    // not musl, whose static build is the released file).
    let argv: Vec<std::ffi::OsString> = (0..usize::try_from(argc).unwrap_or(0))
        .map(|i| {
            use std::os::unix::ffi::OsStrExt;
            // SAFETY: libc hands main argc valid, NUL-terminated strings.
            let arg = unsafe { std::ffi::CStr::from_ptr(*argv.add(i)) };
            std::ffi::OsStr::from_bytes(arg.to_bytes()).to_owned()
        })
        .collect();
    if argv.first().is_some_and(|a| runtime::is_its_name(a)) {
        return runtime::main(argv);
    }
    match run(argv) {
        Ok(status) => status,
        Err(error) => {
            eprintln!("eatmydata: {error}");
            std::ffi::c_int::from(error.exit_code())
        }
    }
}

/// Does what the command line asks; returns only when there is no command
/// to replace this process (help, version, `--report`, `--sync-at-exit`),
/// with the status.
fn run(argv: Vec<std::ffi::OsString>) -> Result<std::ffi::c_int, Error> {
    let invocation = args::parse(argv)?;
    let invocation = match invocation {
        Action::Help => {
            print!("{}", args::HELP);
            return Ok(0);
        }
        Action::Version => {
            println!("eatmydata {}", env!("CARGO_PKG_VERSION"));
            println!("{}", library::carried_line());
            return Ok(0);
        }
        Action::PrintLibrary => {
            println!("{}", library::locate()?.path.display());
            return Ok(0);
        }
        Action::Profile(args) => return profile::command::run(args),
        Action::Runtime(args) => {
            let argv = std::iter::once(runtime::NAME.into()).chain(args);
            return Ok(runtime::main(argv.collect()));
        }
        Action::Run(invocation) => invocation,
    };
    launch(invocation)
}

/// Finds the library and the command, plans how the command runs, and
/// runs it so.
fn launch(invocation: Invocation) -> Result<std::ffi::c_int, Error> {
    if let Some(call) = client::container::read(&invocation.command, &invocation.args) {
        return Err(container_client(&invocation, &call));
    }
    let library = library::locate()?;
    let program = search::resolve(&invocation.command)?;
    let judged = target::judged(
        &invocation.command,
        &program,
        &invocation.args,
        &library.path,
    );
    let found = plan::Found {
        kind: judged.kind,
        // A set-id init, or what it runs: either way the loader is secure.
        set_id: decide::set_id_of(&judged.path).or_else(|| decide::set_id_of(&program)),
        judged: judged.name,
        through: judged.through,
        ld_preload: std::env::var_os(preload::VARIABLE),
        client_notice: std::env::var_os(client::SILENCE),
        sync_at_exit_switch: flush::asked(false),
        proc_mounted: std::path::Path::new("/proc/self").exists(),
        keep: keep::resolve("--keep", &invocation.keep)?,
        only: keep::resolve("--only", &invocation.only)?,
        inherited_keep: std::env::var_os(protocol::KEEP),
        inherited_only: std::env::var_os(protocol::ONLY),
        inherited_child_filter: std::env::var_os(protocol::CHILD_FILTER).is_some_and(|v| {
            protocol::child_filter(v.as_encoded_bytes()) != protocol::ChildFilter::Off
        }),
        library,
        program,
    };
    execute(plan::plan(invocation, found)?)
}

/// Runs a container client with the way in chosen (the runtime, or a
/// profile sent with the request), or as asked with a note: never
/// preloaded or filtered, which would reach the client alone.
fn container_client(invocation: &Invocation, call: &client::container::Call) -> Error {
    use client::container;
    let program = match search::resolve(&invocation.command) {
        Ok(program) => program,
        Err(error) => return error,
    };
    let here = container::Here {
        keep: !invocation.keep.is_empty(),
        only: !invocation.only.is_empty(),
    };
    let facts = container::gather(call, &program, &here);
    let mut outcome = container::decide(call, &invocation.args, &facts);
    let mut said = None;
    if let Some((at, profile)) = &outcome.profile {
        match container::send(&outcome.args, *at, profile) {
            Ok((args, line)) => (outcome.args, said) = (args, Some(line)),
            Err(notice) => outcome.notice = Some(notice),
        }
    }
    let silence = std::env::var_os(client::SILENCE);
    let silenced = silence.is_some_and(|v| !protocol::switch_on(v.as_encoded_bytes()));
    if let Some(notice) = outcome.notice.or(said).filter(|_| !silenced) {
        eprintln!(
            "eatmydata: {notice} {}=0 silences this note.",
            client::SILENCE
        );
    }
    if invocation.verbose {
        outcome
            .inserted
            .iter()
            .for_each(|line| eprintln!("eatmydata: {line}"));
    }
    if invocation.report || invocation.sync_at_exit {
        eprintln!(
            "eatmydata: --report and --sync-at-exit watch the client alone, not the container: not done"
        );
    }
    exec::replace_process(&program, &invocation.command, &outcome.args, &[])
}

/// Carries out `plan`: executes the command in place, or runs it in a
/// child and waits as its parent; returns only as the parent, with the
/// status to end with.
fn execute(plan: Plan) -> Result<std::ffi::c_int, Error> {
    for notice in &plan.notices {
        eprintln!("eatmydata: {notice}");
    }
    // The lists read here as the library and the supervisor read them.
    let (scope, unread) = keep::scope(plan.kept.keep.as_deref(), plan.kept.only.as_deref());
    if let (Some(said), true) = (&unread, plan.verbose) {
        eprintln!("eatmydata: {said}");
    }
    let mut handoff = match plan.seccomp {
        Seccomp::Supervised {
            keep_direct,
            fast_fsync,
            by_mount,
        } => {
            let scope = match by_mount {
                true => scope,
                false => durability::mount::Scope::ALL,
            };
            let handoff = Handoff::new(keep_direct, fast_fsync, scope);
            Some(handoff.map_err(|e| Error::Seccomp(error::plain(&e)))?)
        }
        Seccomp::Off | Seccomp::Plain => None,
    };
    let child_side = handoff.as_ref().map(Handoff::child_side);
    let exec = |env: &[(&str, std::ffi::OsString)]| {
        let installed = match (child_side, plan.seccomp) {
            (Some(side), _) => install_supervised(side),
            (None, Seccomp::Plain) => install_filter(),
            (None, _) => Ok(()),
        };
        if let Err(error) = installed {
            return error;
        }
        exec::replace_process(&plan.program, &plan.command, &plan.args, env)
    };
    let Role::Parent {
        report,
        sync_at_exit,
        wait,
    } = plan.role
    else {
        return Err(exec(&plan.env));
    };
    // The filter goes on the child alone: the files are read after it ends,
    // and the supervisor must not be under the filter it serves.
    let report = report.then(|| scratch::PrivateFile::create("report"));
    let report = report.transpose().map_err(Error::Report)?;
    let list = sync_at_exit.then(flush::create_list);
    let list = list.transpose().map_err(Error::FlushList)?;
    let mut env = plan.env.clone();
    env.extend(
        report
            .iter()
            .map(|file| (report::VARIABLE, file.path().into())),
    );
    env.extend(
        list.iter()
            .map(|file| (flush::VARIABLE, file.path().into())),
    );
    let duty = handoff.as_mut().map(|h| h as &mut dyn supervise::Duty);
    let status = supervise::run(|| exec(&env), wait, duty)?;
    let seccomp = plan.seccomp != Seccomp::Off;
    if let Some(report) = &report {
        let lines = report.read();
        supervise::say(&report::summarize(&lines, seccomp, unread.as_deref()));
        supervise::say(&estimate::tell(&report::flushes(&lines)));
    }
    let verbose = plan.verbose || report.is_some();
    let failed = list
        .as_ref()
        .and_then(|list| flush::after(status, list, seccomp, verbose));
    // The files go before this process ends, by a signal perhaps.
    drop((report, list));
    Ok(failed.unwrap_or_else(|| supervise::exit_like(status)))
}

/// Installs the seccomp filter on this process, for the command to inherit.
fn install_filter() -> Result<(), Error> {
    match filter::install(filter::program()) {
        Ok(set) => {
            say_no_new_privs(set);
            Ok(())
        }
        Err(error) => Err(Error::Seccomp(error::plain(&error))),
    }
}

/// Installs the supervised filter and hands its listener to the parent; on
/// a kernel without user notification, the plain filter, said once.
fn install_supervised(side: handoff::ChildSide) -> Result<(), Error> {
    match side.install() {
        Ok(handoff::Installed::Supervised(set)) => {
            say_no_new_privs(set);
            Ok(())
        }
        Ok(handoff::Installed::Plain(set)) => {
            eprintln!("eatmydata: {}", decide::PLAIN_FILTER_NOTICE);
            say_no_new_privs(set);
            Ok(())
        }
        Ok(handoff::Installed::Nothing) => {
            eprintln!("eatmydata: {}", decide::NO_LISTENER_BY_MOUNT_NOTICE);
            Ok(())
        }
        Err(error) => Err(Error::Seccomp(error::plain(&error))),
    }
}

fn say_no_new_privs(set: filter::NoNewPrivs) {
    if set == filter::NoNewPrivs::Set {
        // SAFETY: geteuid cannot fail and touches no memory.
        let root = unsafe { libc::geteuid() } == 0;
        eprintln!("eatmydata: {}", decide::no_new_privs_notice(root));
    }
}
