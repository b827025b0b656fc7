//! Stand-ins for the official `postgres` and `mariadb` images, which no
//! registry here can give: the engines' Debian image (`image.rs`: Debian
//! 12's PostgreSQL 15 and MariaDB 10.11) with a second layer holding
//! entry points that read the official images' variables
//! (`POSTGRES_PASSWORD`, `MARIADB_ROOT_PASSWORD` or `MYSQL_ROOT_PASSWORD`,
//! the database, the user), say their readiness lines as the official
//! ones do, and run the server on every address as its own user; and
//! MariaDB's `healthcheck.sh`. Their configs are the official ones'
//! where a client can tell: entry point and command, the data folder a
//! volume, the port exposed, PostgreSQL's `SIGINT` to stop. The scripts
//! are `standin/*.sh`.
//!
//! Made once per content beside the engines' image, in `docker save`
//! layout with that image's layer shared, and loaded by `docker load`
//! into a daemon that does not hold them yet.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use super::engine::CACHE;
use super::image::test_image;
use crate::common::TempDir;

/// The stand-in images, in `docker save` layout.
pub struct StandIns {
    /// `eatmydata-test/postgres:HASH`
    pub postgres: String,
    /// `eatmydata-test/mariadb:HASH`
    pub mariadb: String,
    /// This layout's configs, manifest and second layer.
    dir: PathBuf,
    /// The engines' image's layout, whose `layer.tar` is the first layer.
    base: PathBuf,
}

/// The stand-ins, made once per test process (and once per content).
pub fn standins() -> &'static StandIns {
    static MADE: OnceLock<StandIns> = OnceLock::new();
    MADE.get_or_init(make)
}

impl StandIns {
    /// Loads both into the daemon `docker` (a `docker` command with its
    /// `-H`) unless it holds them already.
    pub fn load(&self, docker: impl Fn() -> Command) {
        let held = docker()
            .args(["image", "inspect", &self.postgres, &self.mariadb])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run docker image inspect");
        if held.success() {
            return;
        }
        let mut tar = Command::new("tar")
            .arg("-C")
            .arg(&self.dir)
            .args(["-c", "manifest.json", "postgres.json", "mariadb.json"])
            .args(["standin.tar", "-C"])
            .arg(&self.base)
            .arg("layer.tar")
            .stdout(Stdio::piped())
            .spawn()
            .expect("run tar");
        let output = docker()
            .arg("load")
            .stdin(tar.stdout.take().unwrap())
            .output()
            .expect("run docker load");
        assert!(tar.wait().unwrap().success(), "tar of the stand-ins");
        assert!(
            output.status.success(),
            "docker load of the stand-ins: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

fn make() -> StandIns {
    let base = test_image().dir.clone();
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/containers/standin");
    let extra = TempDir::new("standin-layer");
    let bin = extra.join("usr/local/bin");
    fs::create_dir_all(&bin).unwrap();
    for (from, to) in [
        ("postgres.sh", "postgres-entrypoint.sh"),
        ("mariadb.sh", "mariadb-entrypoint.sh"),
        ("healthcheck.sh", "healthcheck.sh"),
    ] {
        fs::copy(here.join(from), bin.join(to)).unwrap();
    }
    // The official images' data folders start empty: Debian's package
    // made a MariaDB system database in /var/lib/mysql, hidden here by
    // an opaque whiteout.
    for folder in ["var/lib/mysql", "var/lib/postgresql"] {
        fs::create_dir_all(extra.join(folder)).unwrap();
        fs::write(extra.join(folder).join(".wh..wh..opq"), "").unwrap();
    }
    let layer = extra.join("standin.tar");
    let tar = Command::new("tar")
        .arg("-C")
        .arg(extra.path())
        .args(["--sort=name", "--mtime=@0", "--owner=0", "--group=0"])
        .args(["--numeric-owner", "--mode=go-w", "-cf"])
        .arg(&layer)
        .args(["./usr", "./var"])
        .status()
        .expect("run tar");
    assert!(tar.success(), "tar of the stand-ins' layer");
    let base_diff = diff_id_of(&base.join("plain.json"));
    let diff = sha256_of(&layer);
    let key = &sha256_text(&format!("{base_diff} {diff}"))[..16];
    let postgres = format!("eatmydata-test/postgres:{key}");
    let mariadb = format!("eatmydata-test/mariadb:{key}");
    let dir = PathBuf::from(CACHE).join(format!("standin-{key}"));
    let done = dir.join("manifest.json");
    if !done.exists() {
        let part = PathBuf::from(format!("{}.part{}", dir.display(), std::process::id()));
        let _ = fs::remove_dir_all(&part);
        fs::create_dir_all(&part).unwrap();
        fs::copy(&layer, part.join("standin.tar")).unwrap();
        let diffs = format!(r#"["sha256:{base_diff}","sha256:{diff}"]"#);
        let path = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
        let config = |body: &str| {
            format!(
                r#"{{"architecture":"amd64","os":"linux","config":{body},"rootfs":{{"type":"layers","diff_ids":{diffs}}}}}"#
            )
        };
        let postgres_config = config(&format!(
            r#"{{"Env":["{path}","PGDATA=/var/lib/postgresql/data"],"Entrypoint":["postgres-entrypoint.sh"],"Cmd":["postgres"],"ExposedPorts":{{"5432/tcp":{{}}}},"Volumes":{{"/var/lib/postgresql/data":{{}}}},"StopSignal":"SIGINT"}}"#
        ));
        let mariadb_config = config(&format!(
            r#"{{"Env":["{path}"],"Entrypoint":["mariadb-entrypoint.sh"],"Cmd":["mariadbd"],"ExposedPorts":{{"3306/tcp":{{}}}},"Volumes":{{"/var/lib/mysql":{{}}}}}}"#
        ));
        fs::write(part.join("postgres.json"), postgres_config).unwrap();
        fs::write(part.join("mariadb.json"), mariadb_config).unwrap();
        let layers = r#"["layer.tar","standin.tar"]"#;
        let manifest = format!(
            r#"[{{"Config":"postgres.json","RepoTags":["{postgres}"],"Layers":{layers}}},{{"Config":"mariadb.json","RepoTags":["{mariadb}"],"Layers":{layers}}}]"#
        );
        fs::write(part.join("manifest.json"), manifest).unwrap();
        // Another test process may have made it meanwhile: theirs stays.
        if fs::rename(&part, &dir).is_err() {
            let _ = fs::remove_dir_all(&part);
        }
    }
    // Kept from the hourly sweep of the engines' cache.
    let _ = Command::new("touch").arg(&dir).status();
    StandIns {
        postgres,
        mariadb,
        dir,
        base,
    }
}

/// The first layer's diff id, as the engines' image config names it.
fn diff_id_of(config: &Path) -> String {
    let text = fs::read_to_string(config).expect("the engines' image config");
    let json: serde_json::Value = serde_json::from_str(&text).expect("its JSON");
    let id = json["rootfs"]["diff_ids"][0].as_str().expect("a diff id");
    id.trim_start_matches("sha256:").to_owned()
}

fn sha256_of(path: &Path) -> String {
    let output = Command::new("sha256sum").arg(path).output().unwrap();
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stdout)[..64].to_owned()
}

fn sha256_text(text: &str) -> String {
    let mut sum = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    sum.stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = sum.wait_with_output().unwrap();
    String::from_utf8_lossy(&output.stdout)[..64].to_owned()
}
