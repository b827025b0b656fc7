//! The parity corpus's images, tiny and made from the host's own files:
//! the probe (`probes/container_parity.c`) built for each kind of program,
//! and only the loader and libraries it needs (`ldd` says which; the
//! aarch64 ones come from libc6-arm64-cross). Each is a tar of fixed
//! order, owners and times, imported under a tag that is its hash, so a
//! daemon's store keeps it until its content changes.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Libc, TempDir, musl_loader, probe, probe_for};

/// Where the probe sits in every image.
pub const PROBE: &str = "/bin/probe";

/// One image of the corpus: its tag and the architecture it says it is
/// for, which `docker run` warns about when it is not the host's (alike
/// under both runtimes).
pub struct Tiny {
    pub tag: String,
    architecture: &'static str,
    layer: PathBuf,
    digest: String,
}

impl Tiny {
    /// Loads the image, as `docker save` would have written it: its one
    /// layer, its config, and a manifest that tags it.
    fn load(&self, docker: impl Fn() -> Command) {
        let dir = self.layer.with_extension("image");
        fs::create_dir_all(&dir).unwrap();
        fs::rename(&self.layer, dir.join("layer.tar")).unwrap();
        let config = format!(
            r#"{{"architecture":"{}","os":"linux","config":{{"Env":["PATH={PATH}"]}},"rootfs":{{"type":"layers","diff_ids":["sha256:{}"]}}}}"#,
            self.architecture, self.digest
        );
        fs::write(dir.join("config.json"), config).unwrap();
        let manifest = format!(
            r#"[{{"Config":"config.json","RepoTags":["{}"],"Layers":["layer.tar"]}}]"#,
            self.tag
        );
        fs::write(dir.join("manifest.json"), manifest).unwrap();
        let archive = self.layer.with_extension("image.tar");
        run(Command::new("tar")
            .arg("-C")
            .arg(&dir)
            .arg("-cf")
            .arg(&archive)
            .arg("."));
        run(docker().args(["load", "--quiet", "--input"]).arg(&archive));
    }
}

/// Where the shell image has each kind of program beside `/bin/sh`
/// (dash), bash, `ldd`, `chroot` and the probe at [`PROBE`]: i386, ASan,
/// static (which starts others with its `exec`) and arm64 builds of it;
/// and tini, static (the host's tini-static, Debian's tini), and gosu, a
/// static Go program, as an image that names one as its entry point has it.
pub const PROBE32: &str = "/bin/probe32";
pub const ASAN: &str = "/bin/asan";
pub const STATIC: &str = "/bin/probe-static";
pub const ARM64: &str = "/bin/probe-arm64";
pub const TINI: &str = "/sbin/tini";
pub const GOSU: &str = "/usr/sbin/gosu";

/// The images' `PATH`, Debian's.
const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// What goes into a tree: a host file at a path inside, with a mode, or
/// a file of given bytes, or a folder.
enum Entry {
    Copy(PathBuf, String, u32),
    Bytes(&'static str, &'static str),
    Folder(&'static str, u32),
}

/// The images, laid out in `dir` (the tars) and named by content.
pub struct Images {
    pub plain: Tiny,
    pub opt_file: Tiny,
    pub opt_eatmydata_file: Tiny,
    pub i386: Tiny,
    pub arm64: Tiny,
    pub musl: Tiny,
    pub asan: Tiny,
    pub setuid: Tiny,
    pub static_glibc: Tiny,
    /// Shells and what they start: [`SHELL_PROGRAMS`].
    pub shell: Tiny,
    _dir: TempDir,
}

impl Images {
    pub fn make() -> Images {
        let dir = TempDir::new("parity-images");
        let glibc = probe("container_parity", &[]);
        let tiny = |name: &str, architecture: &'static str, entries: Vec<Entry>| {
            tree(&dir, name, architecture, entries)
        };
        let common = || {
            vec![
                Entry::Folder("/tmp", 0o1777),
                Entry::Folder("/opt", 0o755),
                Entry::Bytes("/etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"),
            ]
        };
        let with = |program: &Path, mode: u32, extra: Vec<Entry>| {
            let mut entries = common();
            entries.extend(dynamic(program, mode));
            entries.extend(extra);
            entries
        };
        let i386 = probe("container_parity", &["-m32"]);
        let musl = probe_for(Libc::Musl, "container_parity", &[]);
        let loader = musl_loader();
        let loader_inside = loader.to_str().unwrap().to_owned();
        let mut musl_entries = common();
        musl_entries.push(Entry::Copy(musl.clone(), PROBE.to_owned(), 0o755));
        musl_entries.push(Entry::Copy(loader, loader_inside, 0o755));
        let mut static_entries = common();
        static_entries.push(Entry::Copy(
            probe("container_parity", &["-static"]),
            PROBE.to_owned(),
            0o755,
        ));
        let asan = probe("container_parity", &["-fsanitize=address"]);
        let static_probe = probe("container_parity", &["-static"]);
        let mut shell_entries = with(&glibc, 0o755, vec![]);
        for (program, to) in [
            (Path::new("/bin/dash"), "/bin/sh"),
            (Path::new("/bin/bash"), "/bin/bash"),
            (Path::new("/usr/sbin/chroot"), "/usr/sbin/chroot"),
            (Path::new("/bin/cat"), "/bin/cat"),
            (&i386, PROBE32),
            (&asan, ASAN),
        ] {
            shell_entries.extend(dynamic_at(program, to, 0o755));
        }
        shell_entries.push(Entry::Copy(static_probe, STATIC.to_owned(), 0o755));
        shell_entries.push(Entry::Copy(
            Path::new("/usr/bin/tini-static").into(),
            TINI.to_owned(),
            0o755,
        ));
        shell_entries.push(Entry::Copy(GOSU.into(), GOSU.to_owned(), 0o755));
        shell_entries.push(Entry::Copy(
            Path::new("/usr/bin/ldd").into(),
            "/usr/bin/ldd".into(),
            0o755,
        ));
        for entry in arm64(&dir) {
            match entry {
                Entry::Copy(from, to, mode) if to == PROBE => {
                    shell_entries.push(Entry::Copy(from, ARM64.to_owned(), mode))
                }
                Entry::Copy(..) => shell_entries.push(entry),
                _ => {}
            }
        }
        Images {
            plain: tiny("plain", "amd64", with(&glibc, 0o755, vec![])),
            opt_file: tiny("opt-file", "amd64", {
                let mut entries = with(&glibc, 0o755, vec![]);
                entries.retain(|entry| !matches!(entry, Entry::Folder("/opt", _)));
                entries.push(Entry::Bytes("/opt", "a file where /opt would be\n"));
                entries
            }),
            opt_eatmydata_file: tiny(
                "opt-eatmydata-file",
                "amd64",
                with(
                    &glibc,
                    0o755,
                    vec![Entry::Bytes("/opt/eatmydata", "a file of the image's\n")],
                ),
            ),
            i386: tiny("i386", "386", with(&i386, 0o755, vec![])),
            arm64: tiny("arm64", "arm64", arm64(&dir)),
            musl: tiny("musl", "amd64", musl_entries),
            asan: tiny("asan", "amd64", with(&asan, 0o755, vec![])),
            setuid: tiny("setuid", "amd64", with(&glibc, 0o4755, vec![])),
            static_glibc: tiny("static", "amd64", static_entries),
            shell: tiny("shell", "amd64", shell_entries),
            _dir: dir,
        }
    }

    pub fn all(&self) -> [&Tiny; 10] {
        [
            &self.plain,
            &self.opt_file,
            &self.opt_eatmydata_file,
            &self.i386,
            &self.arm64,
            &self.musl,
            &self.asan,
            &self.setuid,
            &self.static_glibc,
            &self.shell,
        ]
    }

    /// Imports into the daemon `docker` talks to each image it lacks, and
    /// removes its older ones.
    pub fn load(&self, docker: impl Fn() -> Command) {
        let listed = run(docker().args([
            "images",
            "--format",
            "{{.Repository}}:{{.Tag}}",
            "--filter",
            "reference=eatmydata-parity/*",
        ]));
        let have: Vec<&str> = listed.lines().collect();
        let wanted: Vec<&str> = self.all().iter().map(|tiny| tiny.tag.as_str()).collect();
        for stale in have.iter().filter(|tag| !wanted.contains(tag)) {
            run(docker().args(["rmi", "--force", stale]));
        }
        for tiny in self.all() {
            if !have.contains(&tiny.tag.as_str()) {
                tiny.load(&docker);
            }
        }
    }
}

/// The program at `PROBE` with `mode`, and the loader and libraries `ldd`
/// names, each at the path it names.
fn dynamic(program: &Path, mode: u32) -> Vec<Entry> {
    dynamic_at(program, PROBE, mode)
}

/// `program` at `to` with `mode`, and the loader and libraries `ldd` names.
fn dynamic_at(program: &Path, to: &str, mode: u32) -> Vec<Entry> {
    let listed = run(Command::new("ldd").arg(program));
    let mut entries = vec![Entry::Copy(program.to_owned(), to.to_owned(), mode)];
    for line in listed.lines() {
        // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)", or the
        // loader alone: "/lib64/ld-linux-x86-64.so.2 (0x...)".
        let path = match line.split_once("=>") {
            Some((_, rest)) => rest.split_whitespace().next(),
            None => line.split_whitespace().next(),
        };
        if let Some(path) = path.filter(|path| path.starts_with('/')) {
            entries.push(Entry::Copy(path.into(), path.to_owned(), 0o755));
        }
    }
    entries
}

/// The probe cross-built for aarch64, with the loader and libc of
/// libc6-arm64-cross at the paths an arm64 Debian image has them.
fn arm64(dir: &TempDir) -> Vec<Entry> {
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/probes/container_parity.c");
    let program = dir.join("container_parity-aarch64");
    let status = Command::new("aarch64-linux-gnu-gcc")
        .args(["-Wall", "-Wextra", "-Werror", "-O1", "-D_GNU_SOURCE", "-o"])
        .arg(&program)
        .arg(&source)
        .status()
        .expect("run aarch64-linux-gnu-gcc (gcc-aarch64-linux-gnu)");
    assert!(status.success(), "cross-compiling the probe failed");
    let cross = Path::new("/usr/aarch64-linux-gnu/lib");
    vec![
        Entry::Folder("/tmp", 0o1777),
        Entry::Folder("/opt", 0o755),
        Entry::Copy(program, PROBE.to_owned(), 0o755),
        Entry::Copy(
            cross.join("ld-linux-aarch64.so.1"),
            "/lib/ld-linux-aarch64.so.1".to_owned(),
            0o755,
        ),
        Entry::Copy(
            cross.join("libc.so.6"),
            "/lib/aarch64-linux-gnu/libc.so.6".to_owned(),
            0o755,
        ),
    ]
}

/// Lays `entries` out under `dir/name`, tars them in a fixed order, owner
/// and time, and names the image by the tar's hash.
fn tree(dir: &TempDir, name: &str, architecture: &'static str, entries: Vec<Entry>) -> Tiny {
    let root = dir.join(name);
    let inside = |path: &str| root.join(path.trim_start_matches('/'));
    for entry in &entries {
        let (path, mode) = match entry {
            Entry::Copy(from, to, mode) => {
                let to = inside(to);
                fs::create_dir_all(to.parent().unwrap()).unwrap();
                // The file the path leads to: a library's links are not kept.
                fs::copy(from, &to).unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
                (to, *mode)
            }
            Entry::Bytes(to, bytes) => {
                let to = inside(to);
                fs::create_dir_all(to.parent().unwrap()).unwrap();
                fs::write(&to, bytes).unwrap();
                (to, 0o644)
            }
            Entry::Folder(to, mode) => {
                let to = inside(to);
                fs::create_dir_all(&to).unwrap();
                (to, *mode)
            }
        };
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
    }
    let tar = dir.join(format!("{name}.tar"));
    run(Command::new("tar")
        .arg("-C")
        .arg(&root)
        .args([
            "--sort=name",
            "--mtime=@0",
            "--owner=0",
            "--group=0",
            "--numeric-owner",
            "-cf",
        ])
        .arg(&tar)
        .arg("."));
    let sum = run(Command::new("sha256sum").arg(&tar));
    let digest = sum.split_whitespace().next().unwrap().to_owned();
    Tiny {
        tag: format!("eatmydata-parity/{name}:{}", &digest[..16]),
        architecture,
        layer: tar,
        digest,
    }
}

/// Runs `command`, asserting success; its stdout.
pub fn run(command: &mut Command) -> String {
    let output = command.output().expect("run a command");
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}
