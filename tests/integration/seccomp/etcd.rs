//! etcd (Debian's etcd-server, a Go program) under plain `eatmydata`: the
//! command finds it is Go and turns the supervised filter on, and its puts
//! send no flush to the disk; without eatmydata each put flushes its
//! write-ahead log. etcd listens on loopback ports of its own and is
//! stopped at the end, whatever happens.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::common::{Flushes, command, library, nosync};
use crate::loopfs::LoopFs;

const PUTS: u64 = 60;

/// A free loopback port (free when asked; etcd takes it at once).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running etcd, killed when dropped.
struct Etcd {
    child: Child,
    endpoint: String,
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How etcd runs: alone, with its syncs answered by `nosync` (the
/// floor), or under eatmydata.
#[derive(Clone, Copy)]
enum Way {
    Alone,
    Floor,
    Eaten,
}

fn start(disk: &LoopFs, name: &str, way: Way) -> Etcd {
    let (client, peer) = (free_port(), free_port());
    let endpoint = format!("http://127.0.0.1:{client}");
    let peer_url = format!("http://127.0.0.1:{peer}");
    let mut etcd = match way {
        Way::Alone => Command::new("etcd"),
        Way::Floor => {
            let mut nosync = Command::new(nosync());
            nosync.arg("etcd");
            nosync
        }
        Way::Eaten => {
            library();
            let mut eatmydata = Command::new(command());
            eatmydata.arg("etcd");
            eatmydata
        }
    };
    etcd.env_remove("LD_PRELOAD")
        .arg(format!("--data-dir={}", disk.join(name).display()))
        .arg(format!("--name={name}"))
        .arg(format!("--listen-client-urls={endpoint}"))
        .arg(format!("--advertise-client-urls={endpoint}"))
        .arg(format!("--listen-peer-urls={peer_url}"))
        .arg(format!("--initial-advertise-peer-urls={peer_url}"))
        .arg(format!("--initial-cluster={name}={peer_url}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(disk.join(format!("{name}.log"))).unwrap());
    let etcd = Etcd {
        child: etcd.spawn().expect("run etcd (install etcd-server)"),
        endpoint,
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !etcdctl(&etcd, &["endpoint", "health"]) {
        let log = std::fs::read_to_string(disk.join(format!("{name}.log"))).unwrap_or_default();
        assert!(Instant::now() < deadline, "etcd did not start:\n{log}");
        thread::sleep(Duration::from_millis(200));
    }
    etcd
}

fn etcdctl(etcd: &Etcd, args: &[&str]) -> bool {
    Command::new("etcdctl")
        .env("ETCDCTL_API", "3")
        .arg(format!("--endpoints={}", etcd.endpoint))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run etcdctl (install etcd-client)")
        .success()
}

/// The flushes the puts sent to the disk, with everything put read back.
fn puts(disk: &LoopFs, name: &str, way: Way) -> u64 {
    let etcd = start(disk, name, way);
    let before = disk.flushes();
    for i in 0..PUTS {
        assert!(etcdctl(
            &etcd,
            &["put", &format!("key{i}"), &format!("value{i}")]
        ));
    }
    let flushes = disk.flushes() - before;
    let last = format!("key{}", PUTS - 1);
    assert!(etcdctl(&etcd, &["get", &last]));
    drop(etcd);
    // Its write-ahead log takes 64 MiB at once: room for the next one.
    std::fs::remove_dir_all(disk.join(name)).unwrap();
    flushes
}

#[test]
fn etcd_puts_send_no_flush_to_the_disk() {
    let disk = LoopFs::new("etcd", 320);
    Flushes {
        control: puts(&disk, "control", Way::Alone),
        floor: puts(&disk, "floor", Way::Floor),
        eaten: puts(&disk, "eaten", Way::Eaten),
    }
    .assert_eaten(PUTS, &format!("etcd, {PUTS} puts"));
}
