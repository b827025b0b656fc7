//! The cases every engine runs, each a control run with plain runc beside
//! the same run under the runtime, on a loop device of the case's own: a
//! database server doing real work (its rows then counted by a server
//! started without the runtime), a program that syncs by itself (static C,
//! Go, dynamic C), and the per-container off switch.

use super::engine::{
    Engine, Job, Measured, assert_eaten, floor_args as floor_args_of, measure, report, script,
};
use crate::loopfs::LoopFs;

/// Single-row transactions a server case commits.
pub const ROWS: u32 = 300;
/// fsyncs a program case makes.
pub const SYNCS: u32 = 50;

/// The probes in the image (see `image.rs`).
pub const STATIC: &str = "/opt/probes/sync-static";
pub const DYNAMIC: &str = "/opt/probes/sync-dynamic";
pub const GO: &str = "/opt/probes/sync-go";

/// A database server (`mariadb` or `postgres`, from Debian's packages, so
/// dynamically linked) commits `ROWS` transactions with and without the
/// runtime; after each clean shutdown, a server started without the
/// runtime finds every row.
pub fn server(engine: &dyn Engine, server: &str) {
    let disk = LoopFs::new(&format!("{}-{server}", engine.name()), 1024);
    server_on(engine, server, &disk);
}

/// The same on `disk`, made before the engine (for one that sees only
/// what it was given when it started).
pub fn server_on(engine: &dyn Engine, server: &str, disk: &LoopFs) {
    let sh = script(&format!("{server}.sh"));
    let rows = ROWS.to_string();
    let write = |eaten: bool, name: &str, floor: bool| {
        let args = ["sh", &sh, "write", name, &rows];
        let floor_args;
        let job = Job {
            eaten,
            image: engine.image(),
            env: &[],
            args: if floor {
                floor_args = floor_args_of(disk, &args);
                &floor_args
            } else {
                &args
            },
        };
        measure(engine, disk, &job)
    };
    let control = write(false, "plain", false);
    let floor = write(false, "floor", true);
    let eaten = write(true, "eaten", false);
    assert_eaten(
        engine.name(),
        server,
        [&control, &floor, &eaten],
        u64::from(ROWS),
    );
    let sum: u32 = (0..ROWS).sum();
    for name in ["plain", "floor", "eaten"] {
        let args = ["sh", &sh, "check", name];
        let job = Job {
            eaten: false,
            image: engine.image(),
            env: &[],
            args: &args,
        };
        let ran = engine.run(disk, &job);
        assert_eq!(
            ran.stdout,
            format!("{ROWS}|{sum}\n"),
            "{name}'s rows after a restart: {ran:?}"
        );
    }
}

/// `program loop FILE SYNCS` (write a block, fsync it) as the container's
/// own entrypoint, with and without the runtime.
pub fn program(engine: &dyn Engine, case: &str, program: &str) {
    let disk = LoopFs::new(&format!("{}-{case}", engine.name()), 64);
    let (control, eaten) = program_runs(engine, &disk, program, &[]);
    let syncs = SYNCS.to_string();
    let args = floor_args_of(&disk, &[program, "loop", "/data/floor", &syncs]);
    let job = Job {
        eaten: false,
        image: engine.image(),
        env: &[],
        args: &args,
    };
    let floor = measure(engine, &disk, &job);
    assert_eaten(
        engine.name(),
        case,
        [&control, &floor, &eaten],
        u64::from(SYNCS),
    );
}

/// The runs of `program`: plain runc, then under the runtime with `env`.
fn program_runs(
    engine: &dyn Engine,
    disk: &LoopFs,
    program: &str,
    env: &[&str],
) -> (Measured, Measured) {
    let syncs = SYNCS.to_string();
    let run = |eaten: bool, env: &[&str], file: &str| {
        let args = [program, "loop", file, &syncs];
        measure(
            engine,
            disk,
            &Job {
                eaten,
                image: engine.image(),
                env,
                args: &args,
            },
        )
    };
    let control = run(false, &[], "/data/control");
    let other = run(true, env, "/data/other");
    (control, other)
}

/// `EATMYDATA_DISABLE=1` in the container's environment: the runtime
/// leaves it alone, and it flushes as the control does.
pub fn disabled(engine: &dyn Engine) {
    let env = "EATMYDATA_DISABLE=1";
    left_alone(engine, env, "disabled", &[env]);
}

/// A container the runtime is told to leave alone (`env` in its
/// environment, or what else `engine` gives its runs under the runtime)
/// flushes as the control does; `case` says how, `label` names its disk.
pub fn left_alone(engine: &dyn Engine, case: &str, label: &str, env: &[&str]) {
    let disk = LoopFs::new(&format!("{}-{label}", engine.name()), 64);
    let (control, disabled) = program_runs(engine, &disk, DYNAMIC, env);
    report(engine.name(), case, &control, &disabled);
    assert_eq!(control.ran.status, Some(0), "control: {:?}", control.ran);
    assert_eq!(
        (disabled.ran.status, &disabled.ran.stdout),
        (control.ran.status, &control.ran.stdout)
    );
    assert!(
        control.flushes >= u64::from(SYNCS),
        "control: {} flushes",
        control.flushes
    );
    // Each fsync flushes once or twice (twice when it commits the journal:
    // a new block, a changed time stamp), so the counts of two like runs
    // differ; none is eaten.
    assert!(
        disabled.flushes >= u64::from(SYNCS) && disabled.flushes * 2 >= control.flushes,
        "{} {case}: {} flushes, the control {}",
        engine.name(),
        disabled.flushes,
        control.flushes
    );
}
