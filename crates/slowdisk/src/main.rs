//! The FUSE server behind `scripts/slow-disk`: a file system of two files,
//! `disk`, a disk image kept in a backing file, and `flushes`, how many
//! `fsync` calls on `disk` it has answered.
//!
//! `scripts/slow-disk` puts a loop device on `disk`. The loop driver turns
//! every flush request it gets (`REQ_OP_FLUSH`, and the flushes the block
//! layer makes of FUA writes: a loop device offers no FUA) into a
//! `vfs_fsync` of its backing file, which FUSE sends here as `FSYNC`. That
//! answer waits for the latency we were given, so the device's every flush
//! costs what a chosen disk's costs, while its reads and writes go on at
//! the backing file's speed: the wait is kept by a thread of its own
//! (`flusher.rs`), never by the threads that serve the device's I/O.
//!
//!     eatmydata-slowdisk MOUNTPOINT BACKING-FILE LATENCY-MICROSECONDS
//!
//! Runs in the foreground until MOUNTPOINT is unmounted; must run as root
//! (it mounts with mount(2), without fusermount).

mod disk;
mod flusher;

use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mountpoint, backing, micros] = args.as_slice() else {
        eprintln!("usage: eatmydata-slowdisk MOUNTPOINT BACKING-FILE LATENCY-MICROSECONDS");
        return ExitCode::from(2);
    };
    let Ok(micros) = micros.parse::<u64>() else {
        eprintln!("eatmydata-slowdisk: not a number of microseconds: {micros}");
        return ExitCode::from(2);
    };
    let disk = match disk::Disk::open(backing.as_ref(), Duration::from_micros(micros)) {
        Ok(disk) => disk,
        Err(error) => {
            eprintln!("eatmydata-slowdisk: {backing}: {error}");
            return ExitCode::from(1);
        }
    };
    let mut config = fuser::Config::default();
    config.mount_options = vec![
        fuser::MountOption::FSName("slowdisk".into()),
        fuser::MountOption::Subtype("slowdisk".into()),
        fuser::MountOption::NoAtime,
    ];
    // Several threads read the device: a loop device in direct I/O mode
    // has many requests in flight, and none waits for another's flush.
    config.n_threads = Some(4);
    config.clone_fd = true;
    match fuser::mount(disk, mountpoint, &config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("eatmydata-slowdisk: {mountpoint}: {error}");
            ExitCode::from(1)
        }
    }
}
