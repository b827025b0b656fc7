//! The engine tests' image, made offline: Debian 12 from
//! `scripts/debian-rootfs` with mariadb-server and postgresql (dynamic
//! servers), the servers' scripts, and the probes copied in (a static C
//! program, a dynamic one, a Go one, a library to preload, and
//! busybox-static's program). It is one
//! layer in a `docker save` archive that docker, containerd and podman all
//! load, with three image configs over that layer: the plain image, one
//! that sets its own `LD_PRELOAD`, and a pod's sandbox (it sleeps).
//!
//! The archive is made once per content (the tree and the files added,
//! hashed) under `engine::CACHE`, and one unused for an hour goes when
//! another is made. Each engine loads it once into its store, where the
//! tag (that hash) finds it next time, and drops its older test images.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::engine::CACHE;
use crate::common::{TempDir, locked, probe};

/// The packages the tree gets.
const PACKAGES: &str = "mariadb-server,postgresql";
/// What the tree keeps out of the layer: caches and docs, to load faster.
const EXCLUDED: &[&str] = &[
    "./.eatmydata-complete",
    "./var/cache/apt",
    "./var/lib/apt/lists",
    "./usr/share/doc",
    "./usr/share/locale",
    "./usr/share/man",
];

/// The archive's layout, in the key: a change to it makes a new archive.
const LAYOUT: &str = "docker-save, plain+preload+pause";

/// The library the preloading image sets in its own `LD_PRELOAD`.
pub const OWN_PRELOAD: &str = "/opt/probes/own_preload.so";

pub struct TestImage {
    /// The `docker save` layout: `tar -C dir -c .` is the archive.
    pub dir: PathBuf,
    /// `eatmydata-test/engines:HASH`
    pub plain: String,
    /// `eatmydata-test/engines-preload:HASH`, with `LD_PRELOAD` set.
    pub preload: String,
    /// `eatmydata-test/engines-pause:HASH`, whose command sleeps: a CRI
    /// pod's sandbox (the kubelet's pause image).
    pub pause: String,
}

impl TestImage {
    /// Unless `have` (a shell command) says the engine holds the image:
    /// removes the engine's older test images (`stale` prints their names,
    /// `remove` takes names as its arguments), then runs `load`, a shell
    /// command that reads the archive on its stdin. One test process at a
    /// time: another's `stale` would otherwise match the image this one
    /// is loading, and remove it under a test that just found it there.
    pub fn load_unless(
        &self,
        have: &str,
        stale: &str,
        remove: &str,
        load: &str,
        env: &[(&str, &str)],
    ) {
        let _one = locked(&Path::new(CACHE).join("load.lock"), libc::LOCK_EX);
        let dir = self.dir.to_str().unwrap();
        let line = format!(
            "{have} >/dev/null 2>&1 || {{ {stale} | xargs -r {remove} >/dev/null; \
             tar -C '{dir}' -c . | {load}; }}"
        );
        let mut sh = Command::new("sh");
        sh.args(["-c", &line]);
        sh.envs(env.iter().copied());
        let output = sh.output().expect("run sh");
        assert!(
            output.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// The image, made once per test process (and once per content).
pub fn test_image() -> &'static TestImage {
    static MADE: OnceLock<TestImage> = OnceLock::new();
    MADE.get_or_init(make)
}

fn sh(line: &str) -> String {
    let output = Command::new("sh")
        .args(["-c", line])
        .output()
        .expect("run sh");
    assert!(
        output.status.success(),
        "{line}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

fn make() -> TestImage {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new(root.join("scripts/debian-rootfs"))
        .args(["--include", PACKAGES, "none"])
        .output()
        .expect("run debian-rootfs");
    assert!(
        output.status.success(),
        "debian-rootfs: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());

    // What is added to the tree, as a tar of fixed order, owners and times.
    let extra = TempDir::new("engines-image");
    let probes = extra.join("opt/probes");
    let tests = extra.join("opt/tests");
    fs::create_dir_all(&probes).unwrap();
    fs::create_dir_all(&tests).unwrap();
    let copy = |from: &Path, to: PathBuf| {
        fs::copy(from, &to).unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
    };
    copy(
        &probe("seccomp_sync", &["-static"]),
        probes.join("sync-static"),
    );
    copy(&probe("seccomp_sync", &[]), probes.join("sync-dynamic"));
    copy(&crate::seccomp::go_probe("static"), probes.join("sync-go"));
    copy(
        &probe("own_preload", &["-shared", "-fPIC"]),
        probes.join("own_preload.so"),
    );
    // Debian's busybox-static, a static shell for an entry point.
    copy(Path::new("/bin/busybox"), probes.join("busybox"));
    for script in ["mariadb.sh", "postgres.sh"] {
        copy(
            &root.join("tests/integration/containers").join(script),
            tests.join(script),
        );
    }
    let extra_tar = extra.join("extra.tar");
    sh(&format!(
        "tar -C '{}' --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf '{}' ./opt/probes ./opt/tests",
        extra.path().display(),
        extra_tar.display()
    ));
    let marker = tree.join(".eatmydata-complete");
    let key = sh(&format!(
        "{{ cat '{}'; stat -c %Y '{}'; echo '{} {LAYOUT}'; }} | sha256sum",
        extra_tar.display(),
        marker.display(),
        EXCLUDED.join(" ")
    ));
    let key = &key[..16];
    let dir = PathBuf::from(CACHE).join(format!("image-{key}"));
    let image = TestImage {
        plain: format!("eatmydata-test/engines:{key}"),
        preload: format!("eatmydata-test/engines-preload:{key}"),
        pause: format!("eatmydata-test/engines-pause:{key}"),
        dir: dir.clone(),
    };
    super::engine::own_cache();
    let lock = Path::new(CACHE).join("image.lock");
    let done = dir.join("manifest.json");
    // One maker at a time, across test processes; later ones find it made.
    let made = Command::new("flock")
        .arg(&lock)
        .args(["sh", "-c", &layout(&tree, &extra_tar, &image, &done)])
        .output()
        .expect("run flock");
    assert!(
        made.status.success(),
        "the engines' image: {}",
        String::from_utf8_lossy(&made.stderr)
    );
    image
}

/// The shell lines that lay out the `docker save` archive in `image.dir`
/// unless `done` is there, and remove older ones.
fn layout(tree: &Path, extra_tar: &Path, image: &TestImage, done: &Path) -> String {
    let dir = image.dir.display();
    let excludes: String = EXCLUDED
        .iter()
        .map(|path| format!(" --exclude='{path}'"))
        .collect();
    let config = |env: &str, cmd: &str| {
        format!(
            r#"{{"architecture":"amd64","os":"linux","config":{{"Env":[{env}"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Cmd":[{cmd}]}},"rootfs":{{"type":"layers","diff_ids":["sha256:'"$diff"'"]}}}}"#
        )
    };
    let preload = format!("\"LD_PRELOAD={OWN_PRELOAD}\",");
    let manifest = format!(
        r#"[{{"Config":"plain.json","RepoTags":["{}"],"Layers":["layer.tar"]}},{{"Config":"preload.json","RepoTags":["{}"],"Layers":["layer.tar"]}},{{"Config":"pause.json","RepoTags":["{}"],"Layers":["layer.tar"]}}]"#,
        image.plain, image.preload, image.pause
    );
    format!(
        "set -e; [ -f '{done}' ] && {{ touch '{dir}'; exit 0; }}
         find '{CACHE}' -maxdepth 1 -name 'image-*' -mmin +60 -exec rm -rf {{}} +
         mkdir -p '{dir}'
         tar -C '{tree}'{excludes} -cf '{dir}/layer.tar' .
         tar -Af '{dir}/layer.tar' '{extra}'
         diff=$(sha256sum '{dir}/layer.tar' | cut -d' ' -f1)
         echo '{plain}' > '{dir}/plain.json'
         echo '{preloaded}' > '{dir}/preload.json'
         echo '{pause}' > '{dir}/pause.json'
         echo '{manifest}' > '{done}.part' && mv '{done}.part' '{done}'",
        done = done.display(),
        tree = tree.display(),
        extra = extra_tar.display(),
        plain = config("", r#""/bin/sh""#),
        preloaded = config(&preload, r#""/bin/sh""#),
        pause = config("", r#""sleep","infinity""#),
    )
}
