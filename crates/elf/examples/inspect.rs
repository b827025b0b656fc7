//! What `eatmydata` reads of each program named, and how long that takes:
//! the kind, and the fastest and median of 30 reads (the first, which
//! brings the file into the page cache, not counted).
//!
//!   cargo run --release -p eatmydata-elf --example inspect -- /usr/sbin/mariadbd /usr/bin/fio

use std::path::Path;
use std::time::{Duration, Instant};

fn main() {
    for path in std::env::args().skip(1) {
        let path = Path::new(&path);
        let kind = eatmydata_elf::inspect(path).kind;
        let mut times: Vec<Duration> = (0..30)
            .map(|_| {
                let started = Instant::now();
                eatmydata_elf::inspect(path);
                started.elapsed()
            })
            .collect();
        times.sort();
        println!(
            "{}: {kind:?}, fastest {:?}, median {:?}",
            path.display(),
            times[0],
            times[15]
        );
    }
}
