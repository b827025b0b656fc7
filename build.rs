//! Builds the C shim that holds libeatmydata.so's exported names, and links
//! it so that exactly those names, listed in `src/preload/exports.map`, are
//! exported by the library.

use std::env;
use std::path::PathBuf;

fn main() {
    let shim = "src/preload/c/shim.c";
    let exports = "src/preload/exports.map";
    println!("cargo:rerun-if-changed={shim}");
    println!("cargo:rerun-if-changed={exports}");

    cc::Build::new()
        .file(shim)
        .flag("-fvisibility=hidden")
        .flag("-U_FORTIFY_SOURCE")
        .flag("-fno-builtin")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .cargo_metadata(false)
        .compile("eatmydata_shim");

    // A cdylib does not re-export what a static library defines
    // (rust-lang/rust#99411): take the whole archive, and export through an
    // anonymous version script (a named one would version the symbols, and a
    // program's reference to fsync@GLIBC_2.2.5 would then skip them).
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let archive = out.join("libeatmydata_shim.a");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--whole-archive,{},--no-whole-archive",
        archive.display()
    );
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        manifest.join(exports).display()
    );
    // libc is named here rather than left to the libc crate, whose `std`
    // feature (turned on by another dependency) stops it linking libc.
    // Before glibc 2.34, dlsym and pthread_testcancel lived in libdl and
    // libpthread; on a newer glibc these are empty stubs, kept for this.
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--no-as-needed,-l:libdl.so.2,-l:libpthread.so.0,-lc,--as-needed"
    );
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,now,-z,relro");
}
