//! The reader against real objects of this machine (glibc's and musl's
//! libc, read from their files and placed as the loader places them), and
//! against tables built to break it.

extern crate std;

use super::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::string::String;
use std::vec::Vec;

/// A file's loadable segments at `bias` plus their addresses, as the loader
/// maps them (the zero-filled tail of a segment left out).
struct Image {
    data: Vec<u8>,
    /// (address, file offset, size)
    segments: Vec<(u64, u64, u64)>,
    bias: u64,
    dynamic: u64,
}

impl Memory for Image {
    fn bytes(&self, address: u64, len: u64) -> Option<&[u8]> {
        let end = address.checked_add(len)?;
        self.segments.iter().find_map(|&(start, offset, size)| {
            let start = start + self.bias;
            (address >= start && end <= start + size).then(|| {
                let from = (offset + address - start) as usize;
                &self.data[from..from + len as usize]
            })
        })
    }
}

fn u16_at(data: &[u8], at: usize) -> u64 {
    u16::from_le_bytes(data[at..at + 2].try_into().unwrap()).into()
}
fn u32_at(data: &[u8], at: usize) -> u64 {
    u32::from_le_bytes(data[at..at + 4].try_into().unwrap()).into()
}
fn u64_at(data: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(data[at..at + 8].try_into().unwrap())
}

impl Image {
    /// `path` placed at `bias`; with `relocated`, its dynamic pointers
    /// moved by the bias in place, as glibc's loader leaves them.
    fn load(path: &str, bias: u64, relocated: bool) -> Image {
        let mut data = std::fs::read(path).unwrap();
        let (phoff, phnum) = (u64_at(&data, 32) as usize, u16_at(&data, 56) as usize);
        let mut image = Image {
            data: Vec::new(),
            segments: Vec::new(),
            bias,
            dynamic: 0,
        };
        let mut dynamic_offset = 0;
        for n in 0..phnum {
            let at = phoff + n * 56;
            let (kind, offset) = (u32_at(&data, at), u64_at(&data, at + 8));
            let (vaddr, filesz) = (u64_at(&data, at + 16), u64_at(&data, at + 32));
            match kind {
                1 => image.segments.push((vaddr, offset, filesz)),
                2 => (image.dynamic, dynamic_offset) = (vaddr + bias, offset as usize),
                _ => {}
            }
        }
        if relocated {
            let pointers = [DT_HASH, DT_STRTAB, DT_SYMTAB, DT_GNU_HASH, DT_VERSYM];
            for entry in (dynamic_offset..).step_by(16) {
                let tag = u64_at(&data, entry) as i64;
                if tag == DT_NULL {
                    break;
                }
                if pointers.contains(&tag) {
                    let value = u64_at(&data, entry + 8) + bias;
                    data[entry + 8..entry + 16].copy_from_slice(&value.to_le_bytes());
                }
            }
        }
        image.data = data;
        image
    }

    fn tables(&self) -> Tables {
        Tables::read(self, self.bias, self.dynamic).expect("tables")
    }
}

/// What `nm -D` says each default-version (or unversioned) defined name of
/// `path` is worth, TLS and absolute symbols left out.
fn nm_defaults(path: &str) -> BTreeMap<String, u64> {
    let output = Command::new("nm")
        .args(["-D", "--defined-only", "--with-symbol-versions", path])
        .output()
        .expect("run nm");
    let text = String::from_utf8(output.stdout).unwrap();
    let mut names = BTreeMap::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [value, kind, name] = fields[..] else {
            continue;
        };
        if kind.eq_ignore_ascii_case("a") {
            continue;
        }
        let default = match name.split_once("@@") {
            Some((name, _)) => name,
            None if name.contains('@') => continue,
            None => name,
        };
        if let Ok(value) = u64::from_str_radix(value, 16) {
            names.insert(default.into(), value);
        }
    }
    names
}

const LIBC: &str = "/lib/x86_64-linux-gnu/libc.so.6";
const MUSL: &str = "/lib/x86_64-linux-musl/libc.so";

/// Every default definition of `path` is found where nm puts it, in each
/// placement the loaders leave.
fn finds_what_nm_lists(path: &str) {
    if !Path::new(path).exists() {
        panic!("{path} is missing: scripts/setup-test-deps installs it");
    }
    let names = nm_defaults(path);
    assert!(names.len() > 100, "{path}: {} names", names.len());
    for (bias, relocated) in [
        (0, false),
        (0x7f00_0000_0000, false),
        (0x7f00_0000_0000, true),
    ] {
        let image = Image::load(path, bias, relocated);
        let tables = image.tables();
        let mut found = 0;
        for (name, &value) in &names {
            let Some(symbol) = tables.find(&image, name.as_bytes()) else {
                continue;
            };
            assert_eq!(symbol.address, value + bias, "{path}: {name}");
            found += 1;
        }
        // The misses are TLS symbols and versions nm shows but the
        // loader hides; a broken table finds none.
        assert!(
            found * 10 > names.len() * 9,
            "{path}: {found} of {}",
            names.len()
        );
        assert_eq!(tables.find(&image, b"eatmydata_no_such_name"), None);
    }
}

#[test]
fn finds_glibc_definitions_at_their_default_version() {
    finds_what_nm_lists(LIBC);
    let image = Image::load(LIBC, 0x1000_0000, true);
    let tables = image.tables();
    // memcpy@GLIBC_2.2.5 and memcpy@@GLIBC_2.14: the default one, an IFUNC.
    let memcpy = tables.find(&image, b"memcpy").expect("memcpy");
    assert!(memcpy.ifunc);
    assert_eq!(memcpy.address, nm_defaults(LIBC)["memcpy"] + 0x1000_0000);
    assert!(!tables.find(&image, b"fsync").unwrap().ifunc);
}

#[test]
fn finds_musl_definitions_by_gnu_and_by_sysv_hash() {
    finds_what_nm_lists(MUSL);
    let image = Image::load(MUSL, 0x7f12_3400_0000, false);
    let mut tables = image.tables();
    let by_gnu = tables.find(&image, b"fsync");
    assert!(tables.hash.is_some(), "musl's libc has both tables");
    tables.gnu_hash = None;
    assert_eq!(tables.find(&image, b"fsync"), by_gnu);
    assert!(by_gnu.is_some());
    assert_eq!(tables.find(&image, b"eatmydata_no_such_name"), None);
}

#[test]
fn hashes_match_the_loaders() {
    assert_eq!(gnu_hash(b""), 5381);
    assert_eq!(gnu_hash(b"printf"), 0x156b_2bb8);
    assert_eq!(sysv_hash(b"printf"), 0x0779_05a6);
}

/// Memory of one flat buffer at address 0.
struct Flat(Vec<u8>);

impl Memory for Flat {
    fn bytes(&self, address: u64, len: u64) -> Option<&[u8]> {
        let start = usize::try_from(address).ok()?;
        self.0
            .get(start..start.checked_add(usize::try_from(len).ok()?)?)
    }
}

/// A one-symbol object in a flat buffer: dynamic section at 0, SysV hash
/// table at 0x100, symbols at 0x200, strings at 0x300, versions at 0x380.
fn tiny(info: u8, version: Option<u16>, chain_loop: bool) -> Flat {
    let mut data = std::vec![0u8; 0x400];
    let mut put = |at: usize, bytes: &[u8]| data[at..at + bytes.len()].copy_from_slice(bytes);
    let mut entries = std::vec![
        (DT_HASH, 0x100u64),
        (DT_SYMTAB, 0x200),
        (DT_STRTAB, 0x300),
        (DT_STRSZ, 0x20)
    ];
    if version.is_some() {
        entries.push((DT_VERSYM, 0x380));
    }
    for (n, (tag, value)) in entries.into_iter().enumerate() {
        put(n * 16, &tag.to_le_bytes());
        put(n * 16 + 8, &value.to_le_bytes());
    }
    // One bucket, two chain slots; symbol 1 is "f".
    put(0x100, &1u32.to_le_bytes());
    put(0x104, &2u32.to_le_bytes());
    put(0x108, &1u32.to_le_bytes());
    put(0x110, &(if chain_loop { 1u32 } else { 0 }).to_le_bytes());
    put(0x200 + 24, &1u32.to_le_bytes());
    put(0x200 + 24 + 4, &[info]);
    put(0x200 + 24 + 6, &7u16.to_le_bytes());
    put(0x200 + 24 + 8, &0x1234u64.to_le_bytes());
    put(0x301, b"f\0");
    if let Some(version) = version {
        put(0x380 + 2, &version.to_le_bytes());
    }
    Flat(data)
}

const GLOBAL_FUNC: u8 = 1 << 4 | 2;

#[test]
fn a_sysv_only_object_is_read_and_its_loops_end() {
    let object = tiny(GLOBAL_FUNC, None, false);
    let tables = Tables::read(&object, 0, 0).unwrap();
    let found = Symbol {
        address: 0x1234,
        ifunc: false,
    };
    assert_eq!(tables.find(&object, b"f"), Some(found));
    assert_eq!(tables.find(&object, b"g"), None);
    let looping = tiny(GLOBAL_FUNC, None, true);
    let tables = Tables::read(&looping, 0, 0).unwrap();
    assert_eq!(tables.find(&looping, b"g"), None);
    // A loop in a table that claims 2^32 - 1 chain entries: not walked
    // 4 billion times, since they are not all there.
    let mut huge = tiny(GLOBAL_FUNC, None, true);
    huge.0[0x104..0x108].copy_from_slice(&u32::MAX.to_le_bytes());
    let tables = Tables::read(&huge, 0, 0).unwrap();
    let started = std::time::Instant::now();
    assert_eq!(tables.find(&huge, b"g"), None);
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
}

#[test]
fn local_hidden_and_tls_symbols_are_not_answered() {
    let find = |object: Flat| Tables::read(&object, 0, 0).unwrap().find(&object, b"f");
    assert_eq!(find(tiny(2, None, false)), None, "local binding");
    assert_eq!(find(tiny(1 << 4 | 6, None, false)), None, "TLS");
    assert_eq!(
        find(tiny(GLOBAL_FUNC, Some(0x8002), false)),
        None,
        "hidden version"
    );
    assert!(
        find(tiny(GLOBAL_FUNC, Some(2), false)).is_some(),
        "default version"
    );
    assert!(
        find(tiny(GLOBAL_FUNC, Some(1), false)).is_some(),
        "global, no version"
    );
    let ifunc = find(tiny(1 << 4 | 10, None, false)).unwrap();
    assert!(ifunc.ifunc);
}

#[test]
fn any_bytes_give_an_answer() {
    // A cheap stand-in for the fuzz target: every prefix and every byte
    // flipped of a tiny object must answer without panicking.
    let object = tiny(GLOBAL_FUNC, Some(2), false);
    for cut in 0..object.0.len() {
        let short = Flat(object.0[..cut].to_vec());
        if let Some(tables) = Tables::read(&short, 0, 0) {
            let _ = tables.find(&short, b"f");
        }
    }
    for at in 0..object.0.len() {
        for value in [0u8, 1, 0x7f, 0xff] {
            let mut bytes = object.0.clone();
            bytes[at] = value;
            let changed = Flat(bytes);
            if let Some(tables) = Tables::read(&changed, 0, 0) {
                let _ = tables.find(&changed, b"f");
            }
        }
    }
}
