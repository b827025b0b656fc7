//! Who runs under the filter: without CAP_SYS_ADMIN eatmydata sets
//! no_new_privs and says what it means; a setuid command is named with the
//! order that works.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::{notices, results, static_probe};
use crate::common::{Run, TempDir, command, library};

/// `whoami` of the static probe, through eatmydata run by `runner`.
fn whoami(
    runner: &[&str],
    options: &[&str],
    program: &Path,
) -> (BTreeMap<String, String>, Vec<String>) {
    library();
    let mut run = Run::new(runner[0])
        .args(&runner[1..])
        .arg(command())
        .args(options);
    run = run.arg(program).arg("whoami");
    let outcome = run.run().success();
    let mut found = results(&outcome);
    for line in outcome.stdout().lines().filter_map(|l| l.split_once(':')) {
        found.insert(line.0.to_owned(), line.1.trim().to_owned());
    }
    (found, notices(&outcome))
}

/// setpriv with CAP_SYS_ADMIN out of the bounding set: root without it.
const NO_SYS_ADMIN: &[&str] = &[
    "setpriv",
    "--bounding-set=-sys_admin",
    "--inh-caps=-sys_admin",
    "--",
];

#[test]
fn without_cap_sys_admin_no_new_privs_is_set_and_said_once() {
    let program = static_probe();
    let (found, said) = whoami(NO_SYS_ADMIN, &["--seccomp"], &program);
    assert_eq!(
        (found["NoNewPrivs"].as_str(), found["Seccomp"].as_str()),
        ("1", "2")
    );
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("no_new_privs") && said[0].contains("setuid"),
        "{said:?}"
    );
    // With CAP_SYS_ADMIN the filter goes on alone, and nothing is said.
    let (found, said) = whoami(&["env", "--"], &["--seccomp"], &program);
    assert_eq!(
        (found["NoNewPrivs"].as_str(), found["Seccomp"].as_str()),
        ("0", "2")
    );
    assert!(said.is_empty(), "{said:?}");
}

#[test]
fn a_setuid_command_is_named_with_the_order_that_works() {
    // A static program, setuid to nobody, run by root: exec changes who runs it.
    let dir = TempDir::new("seccomp-setuid");
    let program = dir.join("setuid-probe");
    fs::copy(static_probe(), &program).unwrap();
    std::os::unix::fs::chown(&program, Some(65534), Some(65534)).unwrap();
    fs::set_permissions(&program, fs::Permissions::from_mode(0o4755)).unwrap();
    let (found, said) = whoami(&["env", "--"], &[], &program);
    assert_eq!(found["euid"], "65534", "the setuid bit works");
    assert_eq!(
        found["Seccomp"], "0",
        "no filter by itself for a set-id program"
    );
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("is setuid") && said[0].contains("eatmydata COMMAND...'"),
        "{said:?}"
    );
    // Asked for without CAP_SYS_ADMIN: no_new_privs, and the bit is ignored,
    // as the notice says.
    let (found, said) = whoami(NO_SYS_ADMIN, &["--seccomp"], &program);
    assert_eq!(
        (found["euid"].as_str(), found["NoNewPrivs"].as_str()),
        ("0", "1")
    );
    assert_eq!(said.len(), 2, "{said:?}");
}
