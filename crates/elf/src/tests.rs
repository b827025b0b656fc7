//! ELF files built byte by byte, one fact each, in both classes.

use super::*;
use std::fs;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A file of ours under the system's temporary folder, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(bytes: &[u8]) -> Scratch {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("eatmydata-elf-{}-{n}", std::process::id()));
        fs::write(&path, bytes).unwrap();
        Scratch(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// What to put in a synthetic ELF file.
#[derive(Default)]
struct Spec {
    is32: bool,
    big_endian: bool,
    interp: bool,
    go_section: bool,
    go_magic_in_data: bool,
}

/// Lays out: header, program headers, data segment, names, section headers.
fn build(spec: &Spec) -> Vec<u8> {
    let is64 = !spec.is32;
    let (ehsize, phentsize, shentsize) = if is64 { (64, 56, 64) } else { (52, 32, 40) };
    let put = |out: &mut Vec<u8>, at: usize, value: u64, size: usize| {
        let bytes = value.to_be_bytes();
        let mut field = bytes[8 - size..].to_vec();
        if !spec.big_endian {
            field.reverse();
        }
        out[at..at + size].copy_from_slice(&field);
    };
    let word = if is64 { 8 } else { 4 };
    let phnum = 2;
    let phoff = ehsize;
    let data_off = phoff + phnum * phentsize;
    let data_len = 64;
    let names_off = data_off + data_len;
    let names = b"\0.text\0.go.buildinfo\0.shstrtab\0";
    let shoff = names_off + names.len();
    let shnum = 3;
    let mut out = vec![0u8; shoff + shnum * shentsize];
    out[..4].copy_from_slice(b"\x7fELF");
    out[4] = if is64 { 2 } else { 1 };
    out[5] = if spec.big_endian { 2 } else { 1 };
    let (ph, sh, sizes) = if is64 {
        (0x20, 0x28, 0x36)
    } else {
        (0x1c, 0x20, 0x2a)
    };
    put(
        &mut out,
        18,
        u64::from(machine::NATIVE_MACHINE.unwrap_or(0)),
        2,
    );
    put(&mut out, ph, phoff as u64, word);
    put(&mut out, sh, shoff as u64, word);
    for (i, value) in [phentsize, phnum, shentsize, shnum, 2].iter().enumerate() {
        put(&mut out, sizes + 2 * i, *value as u64, 2);
    }
    // Program header 0: PT_INTERP or PT_NOTE; 1: a writable PT_LOAD.
    let (flags_at, offset_at, filesz_at) = if is64 { (4, 8, 0x20) } else { (0x18, 4, 0x10) };
    put(&mut out, phoff, if spec.interp { 3 } else { 4 }, 4);
    // The interpreter's name, in the data segment after Go's magic.
    let interp_name = b"/lib64/ld-linux-x86-64.so.2\0";
    let interp_off = data_off + 32;
    out[interp_off..interp_off + interp_name.len()].copy_from_slice(interp_name);
    put(&mut out, phoff + offset_at, interp_off as u64, word);
    put(&mut out, phoff + filesz_at, interp_name.len() as u64, word);
    let load = phoff + phentsize;
    put(&mut out, load, 1, 4);
    put(&mut out, load + flags_at, 6, 4);
    put(&mut out, load + offset_at, data_off as u64, word);
    put(&mut out, load + filesz_at, data_len as u64, word);
    if spec.go_magic_in_data {
        out[data_off + 16..data_off + 16 + GO_BUILDINFO_MAGIC.len()]
            .copy_from_slice(GO_BUILDINFO_MAGIC);
    }
    out[names_off..names_off + names.len()].copy_from_slice(names);
    // Section 1 is named .text, or .go.buildinfo; section 2 the names.
    let (name_off, sect_off, sect_size) = if is64 {
        (0, 0x18, 0x20)
    } else {
        (0, 0x10, 0x14)
    };
    let s1 = shoff + shentsize;
    put(
        &mut out,
        s1 + name_off,
        if spec.go_section { 7 } else { 1 },
        4,
    );
    let s2 = shoff + 2 * shentsize;
    put(&mut out, s2 + name_off, 21, 4);
    put(&mut out, s2 + sect_off, names_off as u64, word);
    put(&mut out, s2 + sect_size, names.len() as u64, word);
    out
}

fn kind_of(spec: &Spec) -> Kind {
    let file = Scratch::new(&build(spec));
    kind(&file.0)
}

#[test]
fn an_interpreter_means_dynamic_and_none_static() {
    for (is32, big_endian) in [(false, false), (true, false), (false, true), (true, true)] {
        let base = Spec {
            is32,
            big_endian,
            ..Spec::default()
        };
        let dynamic = Spec {
            interp: true,
            ..base
        };
        // Under this 64-bit test, a 32-bit program's loader is 32-bit.
        let expected = if is32 {
            Kind::Foreign(Foreign::Bits32)
        } else {
            Kind::Dynamic
        };
        assert_eq!(kind_of(&dynamic), expected, "32: {is32} BE: {big_endian}");
        let static_ = Spec {
            is32,
            big_endian,
            ..Spec::default()
        };
        assert_eq!(
            kind_of(&static_),
            Kind::Static,
            "32: {is32} BE: {big_endian}"
        );
    }
}

#[test]
fn go_is_found_by_section_or_by_magic_even_when_dynamic() {
    for is32 in [false, true] {
        let by_section = Spec {
            is32,
            interp: true,
            go_section: true,
            ..Spec::default()
        };
        assert_eq!(kind_of(&by_section), Kind::Go);
        let by_magic = Spec {
            is32,
            interp: true,
            go_magic_in_data: true,
            ..Spec::default()
        };
        assert_eq!(kind_of(&by_magic), Kind::Go);
    }
}

#[test]
fn anything_else_is_unknown() {
    assert_eq!(kind(Path::new("/nonexistent/program")), Kind::Unknown);
    let text = Scratch::new(b"just some text\n");
    assert_eq!(kind(&text.0), Kind::Unknown);
    let truncated = Scratch::new(&build(&Spec::default())[..40]);
    assert_eq!(kind(&truncated.0), Kind::Unknown);
}

#[test]
fn a_script_is_its_interpreter() {
    let elf = Scratch::new(&build(&Spec::default()));
    let mut script = b"#! ".to_vec();
    script.extend(elf.0.as_os_str().as_encoded_bytes());
    script.extend(b" -x\necho hi\n");
    let script = Scratch::new(&script);
    assert_eq!(kind(&script.0), Kind::Static);
    // A script naming itself ends at the kernel's depth limit.
    let looping = Scratch::new(b"");
    let mut own = b"#!".to_vec();
    own.extend(looping.0.as_os_str().as_encoded_bytes());
    fs::write(&looping.0, own).unwrap();
    assert_eq!(kind(&looping.0), Kind::Unknown);
}

/// `cc` builds `main` with `flags` into this test's own folder.
fn compiled(label: &str, flags: &[&str], compiler: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("eatmydata-elf-{label}-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let source = dir.join("main.c");
    fs::write(&source, "int main(void) { return 0; }\n").unwrap();
    let out = dir.join("main");
    let status = std::process::Command::new(compiler)
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(&source)
        .status()
        .unwrap();
    assert!(status.success(), "{compiler} {flags:?}");
    let bytes = fs::read(&out).unwrap();
    fs::remove_dir_all(&dir).unwrap();
    Scratch::new(&bytes)
}

/// The case that made the command and the runtime fail: a program built
/// with `-fsanitize=address` exits at once when anything is preloaded.
#[test]
fn a_program_linking_a_sanitizer_is_told_apart() {
    let asan = compiled("asan", &["-fsanitize=address"], "cc");
    assert_eq!(kind(&asan.0), Kind::Foreign(Foreign::Sanitizer));
    let plain = compiled("plain", &[], "cc");
    assert_eq!(kind(&plain.0), Kind::Dynamic);
}

/// A dynamic program for another architecture (arm64 here, run by
/// qemu-user) cannot load this machine's library.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_program_of_another_architecture_is_foreign() {
    let arm64 = compiled("arm64", &[], "aarch64-linux-gnu-gcc");
    assert_eq!(kind(&arm64.0), Kind::Foreign(Foreign::Machine));
    let mut bytes = fs::read(std::env::current_exe().unwrap()).unwrap();
    bytes[18] = 183;
    assert_eq!(
        inspect_elf(&bytes[..]).unwrap().kind,
        Kind::Foreign(Foreign::Machine)
    );
}

#[test]
fn this_test_program_is_dynamic() {
    let exe = std::env::current_exe().unwrap();
    assert_eq!(kind(&exe), Kind::Dynamic);
}

#[test]
fn the_loader_says_which_libc() {
    assert_eq!(loader_named(b"/lib64/ld-linux-x86-64.so.2"), Loader::Glibc);
    assert_eq!(loader_named(b"/lib/ld-linux-aarch64.so.1"), Loader::Glibc);
    assert_eq!(loader_named(b"/lib/ld-linux.so.2"), Loader::Glibc);
    assert_eq!(loader_named(b"/lib64/ld64.so.2"), Loader::Glibc);
    assert_eq!(loader_named(b"/lib/ld-musl-x86_64.so.1"), Loader::Musl);
    assert_eq!(
        loader_named(b"/system/bin/linker64"),
        Loader::Other(PathBuf::from("/system/bin/linker64"))
    );
    let exe = std::env::current_exe().unwrap();
    assert_eq!(inspect(&exe).loader, Some(Loader::Glibc));
}

#[test]
fn every_truncation_and_every_flipped_byte_gets_an_answer() {
    // The fuzz target (fuzz/) does this at random; here, every prefix of
    // each synthetic file and every byte of its header set to 0xff.
    for is32 in [false, true] {
        for interp in [false, true] {
            let full = build(&Spec {
                is32,
                interp,
                go_section: true,
                ..Spec::default()
            });
            for len in 0..full.len() {
                let _ = inspect_elf(&full[..len]);
            }
            for at in 0..64 {
                let mut bent = full.clone();
                bent[at] = 0xff;
                let _ = inspect_elf(&bent[..]);
            }
            assert!(inspect_elf(&full[..]).is_some());
        }
    }
}

#[test]
fn an_inline_io_uring_enter_in_the_code_is_found_by_section_or_segment() {
    // The 64-bit little-endian layout of `build`: data at 176, the section
    // table after the names; section 1 and program header 1 point at data.
    let base = build(&Spec {
        interp: true,
        ..Spec::default()
    });
    let (data, names) = (176usize, b"\0.text\0.go.buildinfo\0.shstrtab\0".len());
    let section = 240 + names + 64;
    let mut elf = base.clone();
    elf[18] = 62; // EM_X86_64
    elf[data..data + 7].copy_from_slice(b"\xb8\xaa\x01\x00\x00\x0f\x05");
    elf[section + 0x18..section + 0x20].copy_from_slice(&(data as u64).to_le_bytes());
    elf[section + 0x20..section + 0x28].copy_from_slice(&16u64.to_le_bytes());
    assert_eq!(inspect_elf(&elf[..]).unwrap().kind, Kind::Dynamic);
    let mut executable = elf.clone();
    executable[section + 8] = 4; // SHF_EXECINSTR
    assert_eq!(
        inspect_elf(&executable[..]).unwrap().kind,
        Kind::EntersUring
    );
    // Another machine's code is not read as x86_64's: the program is
    // foreign before its code is looked at.
    let mut other = executable.clone();
    other[18] = 40; // EM_ARM
    assert_eq!(
        inspect_elf(&other[..]).unwrap().kind,
        Kind::Foreign(Foreign::Machine)
    );
    // No section table: the executable PT_LOAD segments are read.
    let mut segments = elf.clone();
    segments[0x3c..0x3e].copy_from_slice(&0u16.to_le_bytes());
    assert_eq!(inspect_elf(&segments[..]).unwrap().kind, Kind::Dynamic);
    segments[64 + 56 + 4] = 5; // PF_R | PF_X
    assert_eq!(inspect_elf(&segments[..]).unwrap().kind, Kind::EntersUring);
    // A static program is not scanned: it is served by seccomp mode anyway.
    let mut static_ = build(&Spec::default());
    static_[18] = 62;
    static_[data..data + 7].copy_from_slice(b"\xb8\xaa\x01\x00\x00\x0f\x05");
    assert_eq!(inspect_elf(&static_[..]).unwrap().kind, Kind::Static);
}

/// A loader is judged by its own header: this machine's class and
/// architecture, or not; anything else is no ELF file.
#[test]
fn a_file_is_native_by_its_class_and_machine() {
    let native = fs::read(std::env::current_exe().unwrap()).unwrap();
    assert_eq!(is_native(&native[..]), Some(true));
    let bits32 = build(&Spec {
        is32: true,
        ..Spec::default()
    });
    assert_eq!(is_native(&bits32[..]), Some(false));
    let mut other = native.clone();
    other[18] = if other[18] == 183 { 62 } else { 183 };
    assert_eq!(is_native(&other[..]), Some(false));
    assert_eq!(is_native(&b"#!/bin/sh\n"[..]), None);
    assert_eq!(is_native(&native[..40]), None, "truncated");
}
