use super::*;

/// A little-endian ELF64 header for x86_64 with `phnum` program headers.
fn elf64(phnum: u16) -> [u8; 64] {
    let mut bytes = [0u8; 64];
    bytes[..6].copy_from_slice(b"\x7fELF\x02\x01");
    bytes[18..20].copy_from_slice(&62u16.to_le_bytes());
    bytes[0x20..0x28].copy_from_slice(&64u64.to_le_bytes());
    bytes[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
    bytes[0x38..0x3a].copy_from_slice(&phnum.to_le_bytes());
    bytes
}

#[test]
fn the_header_is_read_in_either_class() {
    let found = header(&elf64(3)).unwrap();
    assert_eq!(
        found,
        Header {
            bits64: true,
            little: true,
            machine: 62,
            phoff: 64,
            phentsize: 56,
            phnum: 3
        }
    );
    let mut i386 = [0u8; 52];
    i386[..6].copy_from_slice(b"\x7fELF\x01\x01");
    i386[18..20].copy_from_slice(&3u16.to_le_bytes());
    i386[0x1c..0x20].copy_from_slice(&52u32.to_le_bytes());
    i386[0x2a..0x2c].copy_from_slice(&32u16.to_le_bytes());
    i386[0x2c..0x2e].copy_from_slice(&9u16.to_le_bytes());
    let found = header(&i386).unwrap();
    assert!(!found.bits64);
    assert_eq!((found.machine, found.phoff, found.phnum), (3, 52, 9));
    let mut big = elf64(1);
    big[5] = 2;
    big[18..20].copy_from_slice(&21u16.to_be_bytes());
    assert_eq!(header(&big).unwrap().machine, 21);
    assert_eq!(header(b"#!/bin/sh\n"), None);
    assert_eq!(header(b"\x7fELF\x03\x01"), None);
    assert_eq!(header(&elf64(1)[..20]), None);
}

#[test]
fn program_headers_give_the_interpreter_the_dynamic_section_and_the_loads() {
    let header = header(&elf64(3)).unwrap();
    let mut table = [0u8; 3 * 56];
    let entry = |table: &mut [u8], n: usize, kind: u32, offset: u64, vaddr: u64, size: u64| {
        let e = &mut table[n * 56..(n + 1) * 56];
        e[..4].copy_from_slice(&kind.to_le_bytes());
        e[8..16].copy_from_slice(&offset.to_le_bytes());
        e[16..24].copy_from_slice(&vaddr.to_le_bytes());
        e[32..40].copy_from_slice(&size.to_le_bytes());
    };
    entry(&mut table, 0, 3, 0x318, 0x318, 28);
    entry(&mut table, 1, 1, 0x1000, 0x401000, 0x2000);
    entry(&mut table, 2, 2, 0x2e00, 0x403e00, 0x200);
    let found = segments(&header, &table).unwrap();
    assert_eq!(found.interpreter, Some((0x318, 28)));
    assert_eq!(found.dynamic, Some((0x2e00, 0x200)));
    assert_eq!(found.offset_of(0x401010), Some(0x1010));
    assert_eq!(found.offset_of(0x403000), None);
}

#[test]
fn a_script_names_its_interpreter() {
    let mut room = [0u8; SCRIPT_HEAD + 1];
    assert_eq!(interpreter(b"#!/bin/sh\necho", &mut room), Some(c"/bin/sh"));
    assert_eq!(
        interpreter(b"#! \t/usr/bin/env python3\n", &mut room),
        Some(c"/usr/bin/env")
    );
    assert_eq!(interpreter(b"#!\n", &mut room), None);
    assert_eq!(interpreter(b"\x7fELF", &mut room), None);
}

#[test]
fn fd_paths_are_written_in_place() {
    let mut room = [0u8; 32];
    assert_eq!(fd_path(0, &mut room), Some(c"/proc/self/fd/0"));
    assert_eq!(fd_path(1234, &mut room), Some(c"/proc/self/fd/1234"));
    assert_eq!(fd_path(-1, &mut room), None);
}

/// This test program, and a shell script run by it: a native dynamic
/// program with no sanitizer.
#[test]
fn a_real_program_is_read() {
    let exe = std::env::current_exe().unwrap();
    let path = std::ffi::CString::new(exe.to_str().unwrap()).unwrap();
    let image = of(libc::AT_FDCWD, &path, 0).unwrap();
    assert!(image.bits64 && image.native && !image.sanitizer);
    assert_eq!(image.loader, Some(Loader::Glibc));
    let script = std::env::temp_dir().join(format!("eatmydata-image-{}", std::process::id()));
    std::fs::write(&script, format!("#!{}\n", exe.display())).unwrap();
    let path = std::ffi::CString::new(script.to_str().unwrap()).unwrap();
    assert_eq!(of(libc::AT_FDCWD, &path, 0), Some(image));
    std::fs::remove_file(&script).unwrap();
    assert_eq!(of(libc::AT_FDCWD, c"/nonexistent/program", 0), None);
}
