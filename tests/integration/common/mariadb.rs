//! A MariaDB server of a test's own, as the single-file and durability
//! tests start it: one folder holds its data, socket, pid file, log and
//! tmpdir; no network; started and shut down cleanly around a shell
//! script, and killed by its pid if anything fails on the way.

use std::fs;
use std::path::Path;
use std::process::Command;

/// Makes `dir` (which must not exist) the mysql user's, with a fresh
/// data folder in `dir/data` whose root logs in without a password.
pub fn install(dir: &Path) {
    assert!(
        Path::new("/usr/sbin/mariadbd").is_file(),
        "mariadbd is not installed: scripts/setup-test-deps installs mariadb-server"
    );
    fs::create_dir(dir).expect("create the server's folder");
    let status = Command::new("chown")
        .arg("mysql:")
        .arg(dir)
        .status()
        .expect("run chown");
    assert!(status.success());
    let output = Command::new("runuser")
        .args(["-u", "mysql", "--", "mariadb-install-db", "--no-defaults"])
        .args(["--skip-test-db", "--auth-root-authentication-method=normal"])
        .arg(format!("--datadir={}", dir.join("data").display()))
        .arg(format!("--tmpdir={}", dir.display()))
        .env_remove("LD_PRELOAD")
        .output()
        .expect("run mariadb-install-db");
    assert!(
        output.status.success(),
        "mariadb-install-db: {:?}\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The client options that reach the server of `dir`: its socket, as root.
pub fn client(dir: &Path) -> String {
    format!(
        "--no-defaults -u root --socket={}",
        dir.join("socket").display()
    )
}

/// How long a server may take to answer, on a busy machine: then the
/// script fails and says so. It fails at once when the server ends first
/// (a server that could not start must not be waited for: `mariadb-admin
/// --wait=240` retried every 5 s for 20 minutes).
const WAIT_SECONDS: u32 = 180;

/// A shell script: `prefix` (a command that runs the server, or nothing)
/// then `mariadbd` on `dir`, `options` added; `body` once it answers
/// (within [`WAIT_SECONDS`]); a clean shutdown. The server is killed by
/// its pid if anything failed.
pub fn around(dir: &Path, prefix: &str, options: &str, body: &str) -> String {
    let at = |name: &str| dir.join(name).display().to_string();
    let client = client(dir);
    format!(
        "set -e\n\
         {prefix}mariadbd --no-defaults --skip-networking --datadir={data} --socket={socket} \
           --pid-file={pid} --log-error={log} --tmpdir={tmp} {options} &\n\
         server=$!\n\
         trap 'status=$?; set +e; kill -KILL $server 2>/dev/null; exit $status' EXIT\n\
         deadline=$(( $(date +%s) + {WAIT_SECONDS} ))\n\
         until mariadb-admin {client} --connect-timeout=5 ping >/dev/null 2>&1; do\n\
           kill -0 $server 2>/dev/null \
             || {{ echo 'mariadbd ended before it answered' >&2; tail -n 40 {log} >&2; exit 1; }}\n\
           [ \"$(date +%s)\" -lt \"$deadline\" ] \
             || {{ echo 'mariadbd did not answer within {WAIT_SECONDS} s' >&2; tail -n 40 {log} >&2; exit 1; }}\n\
           sleep 0.1\n\
         done\n\
         {body}\n\
         mariadb-admin {client} shutdown\n\
         wait $server\n",
        data = at("data"),
        socket = at("socket"),
        pid = at("server.pid"),
        log = at("server.log"),
        tmp = dir.display(),
    )
}
