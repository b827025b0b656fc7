use super::*;

fn host(files: &[(&str, &str)]) -> (std::path::PathBuf, Host) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("eatmydata-register-{}-{n}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    for (path, text) in files {
        let path = dir.join(path.trim_start_matches('/'));
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    fs::create_dir_all(&dir).unwrap();
    let host = Host::new(&dir).unwrap();
    (dir, host)
}

const RUNTIME: &str = "/usr/local/eatmydata/bin/eatmydata-runtime";

/// Install's changes carried out and recorded, then uninstall's.
fn round_trip(engine: Engine, files: &[(&str, &str)]) -> Vec<Change> {
    let (dir, host) = host(files);
    let changes = plan(engine, &host, RUNTIME, false).unwrap();
    let mut record = Record::default();
    for change in &changes {
        record.note(
            &change.path,
            change.old.as_deref(),
            change.new.as_deref().unwrap(),
        );
        apply(&host, change).unwrap();
    }
    assert_eq!(
        plan(engine, &host, RUNTIME, false).unwrap(),
        [],
        "a second install"
    );
    for change in undo(&host, &record).unwrap() {
        apply(&host, &change).unwrap();
    }
    assert_eq!(undo(&host, &record).unwrap(), [], "a second uninstall");
    for (path, text) in files {
        assert_eq!(fs::read_to_string(host.at(path)).unwrap(), *text, "{path}");
    }
    for change in &changes {
        if change.old.is_none() {
            assert!(!host.at(&change.path).exists(), "{}", change.path);
        }
    }
    fs::remove_dir_all(dir).unwrap();
    changes
}

#[test]
fn containerd_1_edits_the_main_file_and_2_a_drop_in_it_imports() {
    let v2 = "# ours\nversion = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n\
              [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n  \
              runtime_type = \"io.containerd.runc.v2\"\n";
    let changes = round_trip(Engine::Containerd, &[(CONTAINERD, v2)]);
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].path, CONTAINERD);
    assert!(changes[0].new.as_deref().unwrap().starts_with(v2));

    let v3 = "version = 3\nimports = ['conf.d/*.toml'] # the distribution's\n\
              [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]\n  \
              SystemdCgroup = true\n";
    let changes = round_trip(Engine::Containerd, &[(CONTAINERD, v3)]);
    assert_eq!(changes[0].path, CONTAINERD_DROP_IN);
    let drop_in = changes[0].new.as_deref().unwrap();
    let doc = configure::toml::parse(drop_in).unwrap();
    assert_eq!(doc["version"].as_integer(), Some(3), "{drop_in}");
    let ours = &doc["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]["runtimes"][NAME];
    assert_eq!(
        ours["options"]["BinaryName"].as_str(),
        Some(RUNTIME),
        "{drop_in}"
    );
    assert_eq!(
        ours["options"]["SystemdCgroup"].as_bool(),
        Some(true),
        "{drop_in}"
    );

    // Version 3 without the import: the main file.
    let alone = "version = 3\n";
    assert_eq!(
        round_trip(Engine::Containerd, &[(CONTAINERD, alone)])[0].path,
        CONTAINERD
    );
}

#[test]
fn crio_gets_a_drop_in_and_docker_its_daemon_json() {
    let changes = round_trip(Engine::Crio, &[("/etc/crio/crio.conf", "[crio]\n")]);
    assert_eq!(
        (changes[0].path.as_str(), changes[0].old.as_deref()),
        (CRIO_DROP_IN, None)
    );
    let changes = round_trip(Engine::Docker, &[(DOCKER, "{\n  \"debug\": true\n}\n")]);
    assert_eq!(changes[0].path, DOCKER);
    assert_eq!(round_trip(Engine::Docker, &[])[0].old, None);
}

#[test]
fn uninstall_refuses_a_file_changed_since_and_touches_nothing() {
    let (dir, host) = host(&[(DOCKER, "{}\n")]);
    let mut record = Record::default();
    for change in plan(Engine::Docker, &host, RUNTIME, false).unwrap() {
        record.note(
            &change.path,
            change.old.as_deref(),
            change.new.as_deref().unwrap(),
        );
        apply(&host, &change).unwrap();
    }
    let edited = format!("{}\n", fs::read_to_string(host.at(DOCKER)).unwrap());
    fs::write(host.at(DOCKER), &edited).unwrap();
    let error = undo(&host, &record).unwrap_err();
    assert_eq!(error.exit_code(), 65, "{error}");
    assert_eq!(fs::read_to_string(host.at(DOCKER)).unwrap(), edited);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn reads_no_link_fifo_or_huge_file() {
    let (dir, host) = host(&[("/etc/docker/big.json", &"x".repeat(2 << 20))]);
    std::os::unix::fs::symlink("big.json", host.at(DOCKER)).unwrap();
    assert!(read(&host, DOCKER).is_err());
    assert!(read(&host, "/etc/docker/big.json").is_err());
    let fifo = host.at("/etc/docker/fifo");
    let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    assert!(read(&host, "/etc/docker/fifo").is_err());
    assert_eq!(read(&host, "/etc/none.json").unwrap(), None);
    fs::remove_dir_all(dir).unwrap();
}
