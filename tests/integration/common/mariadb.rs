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

/// A shell script: `prefix` (a command that runs the server, or nothing)
/// then `mariadbd` on `dir`, `options` added; `body` once it answers; a
/// clean shutdown. The server is killed by its pid if anything failed.
pub fn around(dir: &Path, prefix: &str, options: &str, body: &str) -> String {
    let at = |name: &str| dir.join(name).display().to_string();
    let client = client(dir);
    format!(
        "set -e\n\
         {prefix}mariadbd --no-defaults --skip-networking --datadir={data} --socket={socket} \
           --pid-file={pid} --log-error={log} --tmpdir={tmp} {options} &\n\
         server=$!\n\
         trap 'status=$?; set +e; kill -KILL $server 2>/dev/null; exit $status' EXIT\n\
         mariadb-admin {client} --wait=240 --connect-timeout=60 ping >/dev/null \
           || {{ tail -n 40 {log} >&2; exit 1; }}\n\
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
