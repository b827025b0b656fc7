//! A job's `services:` as actions/runner makes them, on a dockerd of the
//! test's own in a network namespace of its own: the job's network
//! (`docker network create --label HEX github_network_<hex>`) and each
//! service by the runner's `docker create` line (`--name
//! ALIAS_IMAGE_HEX --label HEX --network ... --network-alias ALIAS -p
//! PORT` without a host port, the workflow's `options:` with its
//! `--health-*`, `-e` each variable and `GITHUB_ACTIONS`/`CI`, `-v` each
//! volume), started and waited for until healthy as the runner does,
//! before any step. The images are the stand-ins for `postgres` and
//! `mariadb` (`standin.rs`), each service's data on a loop device of its
//! own (a `volumes:` bind), so that its flushes can be counted.
//!
//! Then the Action's main, through `@github/local-action`: both
//! databases are recreated under the runtime, answer on their alias and
//! on the host port the runner published, keep what they held, and the
//! same transactions that flushed under runc before (beside a floor, the
//! server told not to sync) flush no more than the floor allows. A third
//! service with an option the copy cannot carry (`--link-local-ip`) is left
//! running, untouched, with one warning; one without a health check answers
//! at once after main (which waited until it listened where the original
//! did); one whose copy fails its health
//! check under the runtime gets a copy under runc in its place, on the
//! same host port, with one warning; the job's own container (the
//! label and network, no alias) is no service, and untouched. Post
//! removes the copies and the summary names all three; the runner's own
//! clean-up (its containers by id, then the network) then succeeds.

use std::io::Write as _;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use super::{runner_on, said};
use crate::common::Flushes;
use crate::containers::account::{Accounted, IMAGE};
use crate::containers::standin::standins;
use crate::loopfs::LoopFs;

/// The runner's label: six hexadecimal digits of its folder's hash.
const LABEL: &str = "5e1f0a";
/// The job's network, as the runner names it.
const NETWORK: &str = "github_network_6f1c0e4b9a2d4c7e8b3a5d0f1e2c3b4a";
const PASSWORD: &str = "test-secret";
/// What the canary service prints (printf's escapes): a name with a
/// right-to-left override, then a lone carriage return and a workflow
/// command, as a service whose log an attacker fills could.
const HOSTILE_LOG: &str = "ready \\342\\200\\256txt.exe\\r::notice::eatmydata-injected";
/// Transactions per workload, each its own commit (its own flush).
const ROWS: u64 = 200;

/// A database service and how a client reaches it.
struct Database {
    alias: &'static str,
    name: String,
    /// The port inside, as `ports:` gives it.
    port: &'static str,
    /// PostgreSQL (else MariaDB).
    postgres: bool,
}

impl Database {
    fn postgres() -> Database {
        Database {
            alias: "postgres",
            name: "postgres_eatmydatatestpostgres_3c9d2e".into(),
            port: "5432",
            postgres: true,
        }
    }

    /// A PostgreSQL service without a health check.
    fn plain() -> Database {
        Database {
            alias: "plain",
            name: "plain_eatmydatatestpostgres_5f0c3a".into(),
            port: "5432",
            postgres: true,
        }
    }

    fn mariadb() -> Database {
        Database {
            alias: "mariadb",
            name: "mariadb_eatmydatatestmariadb_7a41b0".into(),
            port: "3306",
            postgres: false,
        }
    }

    /// The client's command line for `host:port`: reads SQL on stdin,
    /// prints rows one a line.
    fn client(&self, host: &str, port: &str) -> Vec<String> {
        let line = if self.postgres {
            format!(
                "PGPASSWORD={PASSWORD} psql -h {host} -p {port} -U postgres -d app -X -q -A -t -v ON_ERROR_STOP=1"
            )
        } else {
            format!("mariadb -h {host} -P {port} -uroot -p{PASSWORD} app -N -B")
        };
        vec!["sh".into(), "-c".into(), line]
    }

    /// SQL that turns the server's flushes off (`false`) or on again.
    fn syncing(&self, on: bool) -> &'static str {
        match (self.postgres, on) {
            (true, false) => {
                "alter system set fsync = off;\nalter system set synchronous_commit = off;\nselect pg_reload_conf();\nselect pg_sleep(1);\n"
            }
            (true, true) => {
                "alter system reset fsync;\nalter system reset synchronous_commit;\nselect pg_reload_conf();\nselect pg_sleep(1);\n"
            }
            (_, false) => "set global innodb_flush_log_at_trx_commit = 0;\n",
            (_, true) => "set global innodb_flush_log_at_trx_commit = 1;\n",
        }
    }
}

/// ROWS inserts into `table`, each its own transaction.
fn inserts(table: &str) -> String {
    (0..ROWS)
        .map(|i| format!("insert into {table} values ({i});\n"))
        .collect()
}

/// `sql` run by a client container on the job's network against
/// `host:port` of `db`: what it printed.
fn query(docker: &Accounted, db: &Database, host: &str, port: &str, sql: &str) -> String {
    let output = run_sql(docker, db, host, port, sql);
    assert!(
        output.status.success(),
        "{} at {host}:{port}: {}",
        db.alias,
        said(&output)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// [`query`]'s client run, whatever its end.
fn run_sql(docker: &Accounted, db: &Database, host: &str, port: &str, sql: &str) -> Output {
    let mut client = docker
        .docker()
        .args([
            "run",
            "--rm",
            "-i",
            "--network",
            NETWORK,
            "--entrypoint",
            "",
        ])
        .arg(&standins().postgres)
        .args(db.client(host, port))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    client
        .stdin
        .take()
        .unwrap()
        .write_all(sql.as_bytes())
        .unwrap();
    client.wait_with_output().unwrap()
}

/// Waits (2 minutes at most) until `db` answers `select 1` by its alias.
fn wait_answers(docker: &Accounted, db: &Database) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let output = run_sql(docker, db, db.alias, db.port, "select 1;\n");
        if output.status.success() {
            return;
        }
        assert!(Instant::now() < deadline, "{}: {}", db.alias, said(&output));
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Waits (5 minutes at most) until `name` is healthy, as the runner
/// waits for its services.
fn wait_healthy(docker: &Accounted, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let health = docker.ok(&["inspect", "--format", "{{.State.Health.Status}}", name]);
        if health == "healthy" {
            return;
        }
        if Instant::now() > deadline || health == "unhealthy" {
            let logs = docker
                .docker()
                .args(["logs", "--tail", "30", name])
                .output();
            let state = inspect(docker, "{{json .State}}", name);
            panic!("{name} is {health}: {state}\n{}", said(&logs.unwrap()));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The runner's `docker create` of a service, then `docker start`.
fn create_service(docker: &Accounted, name: &str, alias: &str, args: &[&str]) {
    let mut line = vec![
        "create",
        "--name",
        name,
        "--label",
        LABEL,
        "--network",
        NETWORK,
        "--network-alias",
        alias,
    ];
    line.extend(args);
    docker.ok(&line);
    docker.ok(&["start", name]);
}

/// The flushes of `sql` on `disk`.
fn flushes(disk: &LoopFs, run: impl FnOnce() -> String) -> u64 {
    disk.flushes_during(|| {
        run();
    })
}

fn inspect(docker: &Accounted, format: &str, name: &str) -> String {
    docker.ok(&["inspect", "--format", format, name])
}

#[test]
fn the_action_recreates_the_jobs_services_under_the_runtime() {
    let docker = Accounted::start_isolated("action-services");
    let images = standins();
    images.load(|| docker.docker());
    docker.ok(&["network", "create", "--label", LABEL, NETWORK]);
    let postgres = Database::postgres();
    let mariadb = Database::mariadb();
    let pg_disk = LoopFs::new("action-postgres", 160);
    let maria_disk = LoopFs::new("action-mariadb", 400);
    // A folder of each disk (its root holds lost+found, which initdb refuses).
    let bind = |disk: &LoopFs, inside: &str| {
        std::fs::create_dir_all(disk.join("data")).unwrap();
        format!("{}:{inside}", disk.join("data").display())
    };
    let pg_volume = bind(&pg_disk, "/var/lib/postgresql/data");
    let pg_env = format!("POSTGRES_PASSWORD={PASSWORD}");
    create_service(
        &docker,
        &postgres.name,
        postgres.alias,
        &[
            "-p",
            "5432",
            "--health-cmd",
            "pg_isready",
            "--health-interval",
            "1s",
            "--health-timeout",
            "5s",
            "--health-retries",
            "60",
            "-e",
            &pg_env,
            "-e",
            "POSTGRES_DB=app",
            "-e",
            "GITHUB_ACTIONS=true",
            "-e",
            "CI=true",
            "-v",
            &pg_volume,
            "-v",
            "/scratch",
            &images.postgres,
        ],
    );
    let maria_volume = bind(&maria_disk, "/var/lib/mysql");
    let maria_env = format!("MYSQL_ROOT_PASSWORD={PASSWORD}");
    create_service(
        &docker,
        &mariadb.name,
        mariadb.alias,
        &[
            "-p",
            "3306",
            "--health-cmd",
            "healthcheck.sh --connect --innodb_initialized",
            "--health-interval",
            "1s",
            "--health-timeout",
            "5s",
            "--health-retries",
            "90",
            "-e",
            &maria_env,
            "-e",
            "MARIADB_DATABASE=app",
            "-e",
            "GITHUB_ACTIONS=true",
            "-e",
            "CI=true",
            "-v",
            &maria_volume,
            &images.mariadb,
        ],
    );
    // One the copy cannot carry: left as it was.
    let cache = "cache_eatmydatatestaccount_e0c4f1";
    create_service(
        &docker,
        cache,
        "cache",
        &[
            "-i",
            "--entrypoint",
            "/bin/hold",
            "--link-local-ip",
            "169.254.77.1",
            "-e",
            "GITHUB_ACTIONS=true",
            "-e",
            "CI=true",
            IMAGE,
        ],
    );
    // One without a health check: its copy is waited for until it listens
    // where the original did.
    let plain = Database::plain();
    create_service(
        &docker,
        &plain.name,
        plain.alias,
        &[
            "-e",
            "POSTGRES_HOST_AUTH_METHOD=trust",
            "-e",
            "POSTGRES_DB=app",
            "-e",
            "GITHUB_ACTIONS=true",
            "-e",
            "CI=true",
            &images.postgres,
        ],
    );
    // One whose copy under the runtime fails its health check (it looks
    // for the runtime's folder): a copy under runc takes its place. Its
    // log, which the warning quotes, is a hostile service's: a lone
    // carriage return (where the runner's line reader ends a line) before
    // a workflow command, and a right-to-left override.
    let canary = "canary_eatmydatatestpostgres_0d8e6b";
    create_service(
        &docker,
        canary,
        "canary",
        &[
            "-p",
            "8080",
            "--health-cmd",
            "test ! -e /dev/.eatmydata",
            "--health-interval",
            "1s",
            "--health-retries",
            "2",
            "-e",
            "GITHUB_ACTIONS=true",
            "-e",
            "CI=true",
            "--entrypoint",
            "sh",
            &images.postgres,
            "-c",
            // Stops when asked, as a real service does: a first process
            // that ignores SIGTERM would hold each of the Action's three
            // stops (the original, the failed copy, the fallback at post)
            // for their whole 30 s.
            &format!("trap 'exit 0' TERM; printf '{HOSTILE_LOG}\\n'; sleep infinity & wait"),
        ],
    );
    // The job's own container, as the runner makes it: its label and
    // network, no alias, the work folder; never a service.
    let job = "2b7c41d9e0a54f6b8c3d2e1f0a9b8c7d_eatmydatatestaccount_91e2aa";
    docker.ok(&[
        "create",
        "--name",
        job,
        "--label",
        LABEL,
        "--workdir",
        "/__w/repo/repo",
        "--network",
        NETWORK,
        "-i",
        "-e",
        "HOME=/github/home",
        "-e",
        "GITHUB_ACTIONS=true",
        "-e",
        "CI=true",
        "--entrypoint",
        "/bin/hold",
        IMAGE,
    ]);
    docker.ok(&["start", job]);
    for name in [&postgres.name, &mariadb.name, canary] {
        wait_healthy(&docker, name);
    }
    wait_answers(&docker, &plain);
    let gateway = docker.ok(&[
        "network",
        "inspect",
        "--format",
        "{{(index .IPAM.Config 0).Gateway}}",
        NETWORK,
    ]);
    let host_port = |db: &Database| {
        inspect(
            &docker,
            &format!(
                "{{{{(index (index .NetworkSettings.Ports \"{}/tcp\") 0).HostPort}}}}",
                db.port
            ),
            &db.name,
        )
    };
    let ports_before = [host_port(&postgres), host_port(&mariadb)];
    let canary_port = || {
        let format = "{{(index (index .NetworkSettings.Ports \"8080/tcp\") 0).HostPort}}";
        inspect(&docker, format, canary)
    };
    let canary_before = canary_port();
    let cache_before = inspect(&docker, "{{.Id}} {{.State.StartedAt}}", cache);
    let job_before = inspect(&docker, "{{.Id}} {{.State.StartedAt}}", job);
    docker.ok(&[
        "exec",
        &postgres.name,
        "sh",
        "-c",
        "echo before > /scratch/kept",
    ]);

    // Under runc, as the runner started them: the floor, then the control.
    let mut counts = Vec::new();
    for (db, disk) in [(&postgres, &pg_disk), (&mariadb, &maria_disk)] {
        let sql = |text: &str| query(&docker, db, db.alias, db.port, text);
        let tables = ["floor", "control", "eaten"]
            .map(|table| format!("create table {table} (x int primary key);\n"))
            .concat();
        sql(&tables);
        sql(db.syncing(false));
        let floor = flushes(disk, || sql(&inserts("floor")));
        sql(db.syncing(true));
        let control = flushes(disk, || sql(&inserts("control")));
        counts.push((floor, control));
    }

    let (mut runner, _host, action) = runner_on(&docker, "action-services-runner");
    let main = runner.local_action(&action, "main.js");
    let log = said(&main);
    assert!(main.status.success(), "local-action main: {log}");
    eprintln!("{log}");
    // At once, with no retry: main waited until it listened again.
    assert_eq!(
        query(&docker, &plain, plain.alias, plain.port, "select 1;\n"),
        "1"
    );
    for db in [&postgres, &mariadb, &plain] {
        let line = format!("service {} (eatmydata-test/", db.alias);
        assert!(log.contains(&line), "{line} in {log}");
        assert_eq!(
            inspect(&docker, "{{.HostConfig.Runtime}}", &db.name),
            "eatmydata"
        );
        let kept = format!("{}-before-eatmydata", db.name);
        assert_eq!(inspect(&docker, "{{.State.Status}}", &kept), "exited");
    }
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains("::warning::")).collect();
    assert_eq!(
        warnings.len(),
        2,
        "one warning each, cache and canary: {log}"
    );
    let warned = |service: &str, says: &[&str]| {
        warnings.iter().any(|line| {
            line.contains(&format!("service {service} ")) && says.iter().all(|s| line.contains(s))
        })
    };
    assert!(warned("cache", &["IPAMConfig"]), "{log}");
    let fell_back = ["did not come up", "a copy under runc took its place"];
    assert!(warned("canary", &fell_back), "{log}");
    // The canary's log is in its warning (the control), and no line of
    // main's output, read as the runner reads lines (to a CR or an LF),
    // is a command the service wrote.
    assert!(warned("canary", &["eatmydata-injected"]), "{log}");
    let injected: Vec<&str> = log
        .split(['\r', '\n'])
        .filter(|line| line.starts_with("::notice::"))
        .collect();
    assert!(
        injected.is_empty(),
        "a service's log starts a workflow command: {injected:?}"
    );
    assert_eq!(inspect(&docker, "{{.HostConfig.Runtime}}", canary), "runc");
    assert_eq!(
        inspect(&docker, "{{.State.Health.Status}}", canary),
        "healthy"
    );
    assert_eq!(canary_port(), canary_before, "the fallback's host port");
    assert_eq!(
        inspect(&docker, "{{.Id}} {{.State.StartedAt}}", cache),
        cache_before,
        "the service left as it was was touched"
    );
    assert_eq!(inspect(&docker, "{{.HostConfig.Runtime}}", cache), "runc");
    assert!(!log.contains(job), "the job container is no service: {log}");
    assert_eq!(
        inspect(&docker, "{{.Id}} {{.State.StartedAt}}", job),
        job_before,
        "the job container was touched"
    );
    assert_eq!(
        [host_port(&postgres), host_port(&mariadb)],
        ports_before,
        "the host ports the runner published changed"
    );
    let kept = docker.ok(&["exec", &postgres.name, "cat", "/scratch/kept"]);
    assert_eq!(kept, "before", "the anonymous volume's data");

    // Under the runtime: the same transactions, by alias; all there, also
    // through the host port the runner published.
    for (((db, disk), (floor, control)), port) in [(&postgres, &pg_disk), (&mariadb, &maria_disk)]
        .into_iter()
        .zip(counts)
        .zip(&ports_before)
    {
        let eaten = flushes(disk, || {
            query(&docker, db, db.alias, db.port, &inserts("eaten"))
        });
        Flushes {
            control,
            floor,
            eaten,
        }
        .assert_eaten(
            ROWS,
            &format!("the {} service recreated by the action", db.alias),
        );
        let all = "select count(*) from floor;\nselect count(*) from control;\nselect count(*) from eaten;\n";
        let rows = query(&docker, db, &gateway, port, all);
        assert_eq!(rows, format!("{ROWS}\n{ROWS}\n{ROWS}"), "{} rows", db.alias);
    }

    runner
        .env
        .insert("TMPDIR".into(), pg_disk.path().to_str().unwrap().into());
    let post = runner.local_action(&action, "post.js");
    let log = said(&post);
    assert!(post.status.success(), "local-action post: {log}");
    // The copies' logs, shown as the runner shows its services', and
    // never read as workflow commands.
    let shown = log
        .split("the logs of service postgres")
        .nth(1)
        .unwrap_or_else(|| panic!("no logs of postgres shown: {log}"));
    let token = shown
        .split("::stop-commands::")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("the logs not fenced: {log}"));
    let fenced = shown.split(&format!("::{token}::")).next().unwrap();
    assert!(fenced.contains("ready to accept connections"), "{log}");
    let summary = runner.summary();
    eprintln!("{summary}");
    assert!(summary.contains("### Service containers"), "{summary}");
    for alias in ["postgres", "mariadb"] {
        let row = summary
            .lines()
            .find(|line| line.starts_with(&format!("| {alias} |")))
            .unwrap_or_else(|| panic!("no row for {alias}: {summary}"));
        assert!(row.contains("recreated under eatmydata"), "{row}");
    }
    assert!(
        summary.contains("| cache |")
            && summary.contains("not under eatmydata: its copy would differ"),
        "{summary}"
    );
    // The canary's row quotes its log with no character that changes how
    // the row reads (the override) or splits it (the carriage return).
    let row = summary
        .lines()
        .find(|line| line.starts_with("| canary |"))
        .unwrap_or_else(|| panic!("no row for canary: {summary}"));
    assert!(row.contains("eatmydata-injected"), "{row}");
    assert!(!row.contains(['\r', '\u{202e}']), "{row:?}");
    // The account counted the copies' runs (post stopped them first).
    for db in [&postgres, &mariadb] {
        let row = summary
            .lines()
            .find(|line| line.contains(&format!("| `{}` |", db.name)))
            .unwrap_or_else(|| panic!("{} not in the account: {summary}", db.name));
        let skipped: u64 = row
            .trim_end_matches(" |")
            .rsplit("| ")
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(skipped >= ROWS, "{row}");
    }
    // The runner's own clean-up: its containers by id, then the network.
    let left = docker.ok(&[
        "ps",
        "-a",
        "--quiet",
        "--no-trunc",
        "--filter",
        &format!("label={LABEL}"),
    ]);
    let left: Vec<&str> = left.lines().collect();
    assert_eq!(
        left.len(),
        6,
        "four originals kept, cache, the job's: {left:?}"
    );
    let mut rm = vec!["rm", "--force"];
    rm.extend(&left);
    docker.ok(&rm);
    docker.ok(&["network", "rm", NETWORK]);
    assert_ne!(
        docker.ok(&["info", "--format", "{{.DefaultRuntime}}"]),
        "eatmydata"
    );
}

/// `node action/services.js recreate eatmydata`, run alone against the
/// test's daemon, as main runs it: its status, stdout (what it did, as
/// JSON) and stderr.
fn recreate_alone(docker: &Accounted) -> Output {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("action/services.js");
    std::process::Command::new("node")
        .arg(script)
        .args(["recreate", "eatmydata"])
        .env(
            "DOCKER_HOST",
            format!("unix://{}", docker.socket().display()),
        )
        .output()
        .expect("run node")
}

/// Security review 4 (issue 45), low: two runners on one self-hosted host
/// share its dockerd, and each runner labels its jobs' containers with a
/// label of its own (the hash of its `.runner` file). main recreated every
/// runner-labelled service on the daemon, another job's too: it stopped
/// that job's database mid-job, and post then removed the copy. Where
/// services of more than one job run, none is touched now, and the
/// warning says why; the control, with the other job's service gone,
/// recreates this job's.
#[test]
fn another_runner_s_job_s_services_on_the_same_daemon_are_never_touched() {
    let docker = Accounted::start_isolated_registered("action-two-jobs");
    let other = ("a4c2e9", "github_network_0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f");
    let ours = "db_eatmydatatestaccount_5b1e77";
    let theirs = "db_eatmydatatestaccount_93d0c4";
    for ((label, network), name) in [((LABEL, NETWORK), ours), (other, theirs)] {
        docker.ok(&["network", "create", "--label", label, network]);
        let line = [
            "create",
            "--name",
            name,
            "--label",
            label,
            "--network",
            network,
            "--network-alias",
            "db",
            "-i",
            "--entrypoint",
            "/bin/hold",
            IMAGE,
            // Stops when asked, as a database does (never waiting out
            // the Action's 30 s stop for a kill).
            "service",
        ];
        docker.ok(&line);
        docker.ok(&["start", name]);
    }
    let was = |name| inspect(&docker, "{{.Id}} {{.HostConfig.Runtime}}", name);
    let before = [was(ours), was(theirs)];
    let output = recreate_alone(&docker);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        [was(ours), was(theirs)],
        before,
        "a service was recreated on a daemon two jobs share: {stderr}"
    );
    assert!(
        stderr.contains("services of 2 jobs run on this Docker") && stderr.contains(other.0),
        "{stderr}"
    );
    // The control: this job's alone on the daemon is recreated.
    docker.ok(&["rm", "--force", theirs]);
    let output = recreate_alone(&docker);
    let done = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        inspect(&docker, "{{.HostConfig.Runtime}}", ours),
        "eatmydata",
        "{done}"
    );
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("action/services.js");
    let removed = std::process::Command::new("node")
        .arg(script)
        .args(["remove", done.trim()])
        .env(
            "DOCKER_HOST",
            format!("unix://{}", docker.socket().display()),
        )
        .status()
        .expect("run node");
    assert!(removed.success());
}
