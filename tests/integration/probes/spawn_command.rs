//! Rust's `std::process::Command` starting a program, as a Rust program
//! does: glibc's posix_spawnp, with file actions for the pipes and the
//! attributes std sets, where std can take it.
//! Usage: spawn_command PROGRAM
//!   runs `PROGRAM whoami`, its output piped, and prints that output and
//!   its status; then the errors of a program that is not there, by path
//!   and by name searched in PATH.

use std::process::{Command, Stdio};

fn main() {
    let program = std::env::args().nth(1).expect("a program");
    let ran = Command::new(&program)
        .arg("whoami")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .output()
        .expect("start the program");
    print!("{}", String::from_utf8_lossy(&ran.stdout));
    println!("status {:?}", ran.status.code());
    for missing in ["/nonexistent/eatmydata", "no-such-program-eatmydata"] {
        match Command::new(missing).status() {
            Ok(status) => println!("{missing}: ran, {status}"),
            Err(error) => println!("{missing}: {error}"),
        }
    }
}
