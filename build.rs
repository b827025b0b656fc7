//! Builds the C shim that holds libeatmydata.so's hooks (the Rust
//! trampolines in `src/preload/hooks.rs` export them), and names the
//! libraries the shim needs; for the command, builds the copy of the
//! library it carries (`build/embed.rs`).

#[cfg(feature = "command")]
#[path = "build/embed.rs"]
mod embed;

fn main() {
    // Only the command carries a copy: the build of that copy is one
    // without the feature.
    #[cfg(feature = "command")]
    embed::library();
    // The library is a glibc one on every target (`build/embed.rs`): a
    // musl build is of the command alone, which links no hook, and
    // musl's headers lack the glibc names the shim defines.
    if std::env::var("CARGO_CFG_TARGET_ENV").as_deref() != Ok("musl") {
        shim();
    }
}

fn shim() {
    let sources = [
        "src/preload/c/shim.c",
        "src/preload/c/aio.c",
        "src/preload/c/uring.c",
        "src/preload/c/exec.c",
        "src/preload/c/spawn.c",
        "src/preload/c/spawn_here.c",
        "src/preload/c/spawn_thread.c",
    ];
    println!("cargo:rerun-if-changed=src/preload/c");
    println!("cargo:rerun-if-changed=build");

    cc::Build::new()
        .files(sources)
        .flag("-fvisibility=hidden")
        .flag("-U_FORTIFY_SOURCE")
        .flag("-fno-builtin")
        // Calls to libc through the GOT, not the PLT: with -z now a PLT
        // entry is only a second relocation, looked up at load a second
        // time, for a name whose address the shim also takes.
        .flag("-fno-plt")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .compile("eatmydata_shim");

    // libc is named here rather than left to the libc crate, whose `std`
    // feature (turned on by another dependency) stops it linking libc. It
    // is the only library needed: each one more is opened, mapped and
    // relocated in every process (the shim's weak references say why
    // libpthread is not needed on old glibc).
    println!("cargo:rustc-cdylib-link-arg=-Wl,--no-as-needed,-lc,--as-needed");
    // No crtbeginS.o and friends: they bring four weak references
    // (_ITM_*, __gmon_start__, __cxa_finalize) that the loader looks for,
    // in vain, through every object of every process; the constructor and
    // destructor are .init_array and .fini_array entries, which need none
    // of it. What crtbeginS.o's __cxa_finalize call did at dlclose (drop
    // the fork handler) is moot: nodelete keeps the library mapped.
    println!("cargo:rustc-cdylib-link-arg=-nostartfiles");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    // Read-only data in the text's loaded segment: one mapping fewer at
    // every start, which keeps start-up as cheap as the original
    // libeatmydata's (four mappings) even when .bss spills onto a page of
    // its own, which depends on where the layout falls. GNU ld says so
    // with -z noseparate-code (rust-lld's default, accepted by both);
    // rust-lld, rustc's linker for this target unless turned off, with
    // --no-rosegment, which GNU ld refuses.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,noseparate-code");
    if links_with_rust_lld() {
        println!("cargo:rustc-cdylib-link-arg=-Wl,--no-rosegment");
    }
    // The exec check knows its own file by this ID in any root (`build_id.rs`).
    println!("cargo:rustc-cdylib-link-arg=-Wl,--build-id=sha1");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,now,-z,relro");
    // The name Debian's libeatmydata1 gives it, so that the packaged file
    // (libeatmydata.so.1) takes the place of Debian's for every program.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libeatmydata.so.1");
    // The shim's calls to the Rust side go straight there, not through the
    // PLT: nothing in the library calls a name it exports for others.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic-functions");
    // The library run as a program (`ld.so libeatmydata.so`) starts at
    // an entry point that says it is not one (src/preload/entry.rs).
    println!("cargo:rustc-cdylib-link-arg=-Wl,-e,eatmydata_entry");
}

/// Whether rustc links with its own rust-lld: its default for
/// x86_64-unknown-linux-gnu since 1.90, unless the flags turn it off. An
/// older rustc (the package's rust-version is 1.88) links with the
/// system's linker, GNU ld, which refuses `--no-rosegment`.
fn links_with_rust_lld() -> bool {
    let target = std::env::var("TARGET").unwrap_or_default();
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let off = [
        "linker-features=-lld",
        "link-self-contained=-linker",
        "fuse-ld=bfd",
    ];
    target == "x86_64-unknown-linux-gnu"
        && rustc_minor().is_some_and(|minor| minor >= 90)
        && !off.iter().any(|off| flags.contains(off))
}

/// The minor version of the rustc cargo builds with (`rustc 1.95.0 (...)`).
fn rustc_minor() -> Option<u32> {
    let rustc = std::env::var_os("RUSTC")?;
    let output = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let version = text.split_whitespace().nth(1)?;
    version.split('.').nth(1)?.parse().ok()
}
