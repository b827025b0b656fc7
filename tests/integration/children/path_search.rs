//! The library's `PATH` search, which tells for `execvp` and
//! `posix_spawnp` which program is about to run (to judge it, and to
//! check the set-id bits of `posix_spawnp`'s), stops where libc's stops:
//! at the first file of the name this process may execute, whether it
//! may read it or not. Security review 3 (issue 45) found it passing
//! over a file it could not read: `posix_spawnp` then ran a later file
//! of that name, and an execute-only set-user-ID program, judged by that
//! later file, was given `no_new_privs` and lost its privileges.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use super::filter::{shown, state, whoami_probes};
use crate::common::{Outcome, Run, TempDir, command, library, probe, tmpdir_of};

/// As the user nobody, with `PATH` naming `folders` first.
const NOBODY: [&str; 3] = ["--reuid=65534", "--regid=65534", "--clear-groups"];

#[test]
fn an_execute_only_set_uid_program_first_in_path_is_the_one_judged_and_run() {
    library();
    let dir = TempDir::new("children-path-search");
    let (_, fixed) = whoami_probes();
    let (first, second) = (dir.join("first"), dir.join("second"));
    for folder in [&first, &second] {
        fs::create_dir(folder).unwrap();
        fs::set_permissions(folder, fs::Permissions::from_mode(0o755)).unwrap();
    }
    // First in PATH: set-user-ID to daemon (uid 1), which nobody may
    // execute and not read. Second: the same program, plain and readable.
    let name = "whoami-probe";
    let setuid = first.join(name);
    fs::copy(&fixed, &setuid).unwrap();
    std::os::unix::fs::chown(&setuid, Some(1), Some(1)).unwrap();
    fs::set_permissions(&setuid, fs::Permissions::from_mode(0o4711)).unwrap();
    fs::copy(&fixed, second.join(name)).unwrap();
    fs::set_permissions(second.join(name), fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}:/usr/bin:/bin", first.display(), second.display());
    let (_tmp, tmpdir) = tmpdir_of("nobody");
    let run = |eatmydata: bool, how: &[&str]| -> Outcome {
        let mut run = Run::new("setpriv").args(NOBODY);
        if eatmydata {
            run = run.arg(command());
        }
        run.args(how)
            .env("PATH", &path)
            .env("TMPDIR", &tmpdir)
            .run()
    };
    let spawner = probe("spawn_child", &[]);
    let spawner = spawner.to_str().unwrap();
    // env(1) finds it by execvp; the spawner by posix_spawnp.
    for (how, tail) in [
        (vec!["env", name, "whoami"], ""),
        (
            vec![spawner, "spawnp", "-", name, name, "whoami"],
            "status 0\n",
        ),
    ] {
        let control = run(false, &how);
        let expected = format!("{}{tail}", state(1, 0, 0));
        assert_eq!(
            control.stdout(),
            expected,
            "{how:?}: the set-user-ID bit works"
        );
        let ours = run(true, &how);
        assert_eq!(shown(&ours), shown(&control), "{how:?}");
    }
}
