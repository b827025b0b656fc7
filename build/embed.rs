//! The copy of libeatmydata.so that the command carries.
//!
//! The library and the command are two targets of one package, built side
//! by side by the same cargo run, so the command's compilation cannot wait
//! for the library's. The build script therefore builds the library a
//! second time, in a cargo run of its own (`cargo build --lib --release`
//! of this very package, into a folder under `OUT_DIR`), and hands its
//! path and SHA-256 to the command (`EATMYDATA_EMBEDDED_FILE`,
//! `EATMYDATA_EMBEDDED_SHA256`), which `include_bytes!` it. That works
//! the same for `cargo build`, `cargo install --path` or `--git`, and the
//! unpacked `.crate`.
//!
//! The nested build is for the glibc triple of the target's architecture
//! (the library is a glibc one even under a static or musl command), in
//! the release profile, and without the outer build's flags: a static
//! command's `+crt-static` would break the shared object. It inherits
//! cargo's configuration and jobserver, so it builds offline when the
//! outer one does and takes no more cores than it was given.
//!
//! `EATMYDATA_EMBED=0` builds a command that carries no library (it then
//! needs an installed one, as before).

use std::env;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// Set for the nested build, whose build script must not start another.
const NESTED: &str = "EATMYDATA_EMBED_NESTED";
/// `0` leaves the library out.
const SWITCH: &str = "EATMYDATA_EMBED";

/// What the library is built from, relative to the package: a change to
/// any of them builds the embedded copy again. (In the `.crate` the two
/// crates are dependencies from the registry, not folders here.)
const INPUTS: &[&str] = &[
    "src/preload",
    "src/durability.rs",
    "src/durability",
    "src/protocol.rs",
    "crates/elf",
    "crates/dynsym",
    "Cargo.toml",
    "Cargo.lock",
];

/// Variables the outer build sets or reads that would change the nested
/// one: its flags (`+crt-static`), its target and target folder, clippy.
const LEAKS: &[&str] = &[
    "CARGO_ENCODED_RUSTFLAGS",
    "RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_BUILD_BUILD_DIR",
    "CARGO_BUILD_TARGET",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_PRIMARY_PACKAGE",
];

/// Builds (or finds up to date) the library to embed and tells the
/// command where it is and its hash.
pub fn library() {
    println!("cargo:rerun-if-env-changed={SWITCH}");
    if env::var_os(NESTED).is_some() {
        return;
    }
    let package = PathBuf::from(var("CARGO_MANIFEST_DIR"));
    for input in INPUTS.iter().map(|i| package.join(i)) {
        if input.exists() {
            println!("cargo:rerun-if-changed={}", input.display());
        }
    }
    let out = PathBuf::from(var("OUT_DIR"));
    let bytes = if env::var(SWITCH).as_deref() == Ok("0") {
        Vec::new()
    } else {
        build(&package, &out)
    };
    let file = out.join("embedded-libeatmydata.so");
    if fs::read(&file).ok().as_deref() != Some(&bytes[..]) {
        fs::write(&file, &bytes).expect("write the library to embed");
    }
    let hash = if bytes.is_empty() {
        String::new()
    } else {
        Sha256::digest(&bytes)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    };
    println!("cargo:rustc-env=EATMYDATA_EMBEDDED_FILE={}", file.display());
    println!("cargo:rustc-env=EATMYDATA_EMBEDDED_SHA256={hash}");
}

/// Runs the nested build; returns the library's bytes.
fn build(package: &Path, out: &Path) -> Vec<u8> {
    let triple = glibc_triple(&var("TARGET"));
    // The host's own triple named or not changes the symbols' hashes: left
    // out, the copy is the same file as target/release/libeatmydata.so.
    let named = triple != var("HOST");
    let target_dir = out.join("embedded");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut command = Command::new(cargo);
    command
        .current_dir(package)
        .args(["build", "--lib", "--release", "--package", "eatmydata"])
        .arg("--no-default-features")
        .arg("--manifest-path")
        .arg(package.join("Cargo.toml"))
        .args(named.then(|| ["--target", &triple]).into_iter().flatten())
        .arg("--target-dir")
        .arg(&target_dir)
        .env(NESTED, "1");
    for leak in LEAKS {
        command.env_remove(leak);
    }
    let output = command
        .output()
        .expect("run cargo to build the library to embed");
    if !output.status.success() {
        panic!(
            "the nested build of the library to embed failed ({}); set {SWITCH}=0 to \
             build the command without it:\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let built = match named {
        true => target_dir.join(&triple),
        false => target_dir,
    };
    let built = built.join("release/libeatmydata.so");
    fs::read(&built).unwrap_or_else(|e| panic!("read {}: {e}", built.display()))
}

/// The glibc triple of `target`'s architecture: the library is a glibc
/// one, loaded into musl programs too, whatever the command is linked
/// against.
fn glibc_triple(target: &str) -> String {
    target.replacen("-linux-musl", "-linux-gnu", 1)
}

fn var(name: &str) -> String {
    env::var(name).unwrap_or_else(|_| panic!("cargo sets {name} for build scripts"))
}
