//! Finding a name in the dynamic symbol table of an ELF object that the
//! dynamic loader has already mapped, as `dlsym` finds it there: through
//! the GNU hash table (or the SysV one), skipping undefined, local and
//! hidden-version symbols, preferring the default version.
//!
//! libeatmydata.so walks the loaded objects after its own once at start-up
//! and looks each name it needs up here, instead of asking `dlsym` name by
//! name: no `libdl` to load on old glibc, no loader lock per name. The
//! memory is reached through [`Memory`], which the library backs with the
//! object's own segments and the fuzz target (`fuzz/`) with any bytes: every
//! read is bounded by what [`Memory`] allows, every loop by a table's size,
//! so a malformed table gives "not found", never a crash or a hang.
//!
//! 64-bit ELF, in the machine's own byte order, only: the library is built
//! for x86_64 and aarch64.

#![no_std]

#[cfg(test)]
mod tests;

/// Where the reader reads: the mapped memory of one object.
pub trait Memory {
    /// The `len` bytes at `address`, or `None` when any of them is outside
    /// what may be read.
    fn bytes(&self, address: u64, len: u64) -> Option<&[u8]>;
}

/// A definition found: its address, and whether that address is an IFUNC
/// resolver whose answer (called by the caller) is the function.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Symbol {
    pub address: u64,
    pub ifunc: bool,
}

const DT_NULL: i64 = 0;
const DT_HASH: i64 = 4;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_STRSZ: i64 = 10;
const DT_SYMENT: i64 = 11;
const DT_GNU_HASH: i64 = 0x6fff_fef5;
const DT_VERSYM: i64 = 0x6fff_fff0;
/// Dynamic entries read at most: real objects have a few dozen.
const MAX_DYNAMIC: u64 = 1024;
/// Dynamic entries read at once.
const DYNAMIC_BLOCK: u64 = 16;
const SYM_SIZE: u64 = 24;
const SHN_ABS: u16 = 0xfff1;
const STB_LOCAL: u8 = 0;
const STT_TLS: u8 = 6;
const STT_GNU_IFUNC: u8 = 10;
/// The symbol types the loader accepts: NOTYPE, OBJECT, FUNC, COMMON, TLS,
/// GNU_IFUNC (glibc's `ALLOWED_STT`).
const ALLOWED_TYPES: u32 = 1 << 0 | 1 << 1 | 1 << 2 | 1 << 5 | 1 << 6 | 1 << 10;
/// Version index 0 (local) and 1 (global) mean "no version".
const VERSION_INDEX: u16 = 0x7fff;
const VERSION_HIDDEN: u16 = 0x8000;

/// The tables of one object, found from its dynamic section.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tables {
    base: u64,
    symtab: u64,
    strtab: u64,
    strsz: u64,
    gnu_hash: Option<u64>,
    hash: Option<u64>,
    versym: Option<u64>,
}

fn read_u16(memory: &(impl Memory + ?Sized), at: u64) -> Option<u16> {
    Some(u16::from_ne_bytes(memory.bytes(at, 2)?.try_into().ok()?))
}

fn read_u32(memory: &(impl Memory + ?Sized), at: u64) -> Option<u32> {
    Some(u32::from_ne_bytes(memory.bytes(at, 4)?.try_into().ok()?))
}

fn read_u64(memory: &(impl Memory + ?Sized), at: u64) -> Option<u64> {
    Some(u64::from_ne_bytes(memory.bytes(at, 8)?.try_into().ok()?))
}

/// Whether the dynamic section's pointers are addresses already. glibc's
/// loader adds the load bias to them in place (in a writable dynamic
/// section); musl, the vDSO and read-only dynamic sections keep the file's
/// addresses. The string table's address tells which: taken as it is, it
/// lies in the object only when it was moved (an object loaded at a bias
/// smaller than its own size would be ambiguous; loaders place shared
/// objects far higher).
fn relocated(memory: &(impl Memory + ?Sized), base: u64, strtab: u64) -> bool {
    base == 0 || (strtab >= base && memory.bytes(strtab, 1).is_some())
}

impl Tables {
    /// Reads the dynamic section at `dynamic` of the object loaded at
    /// `base`; `None` when it names no symbol table, string table and hash
    /// table.
    pub fn read(memory: &(impl Memory + ?Sized), base: u64, dynamic: u64) -> Option<Tables> {
        let (mut symtab, mut strtab, mut strsz) = (None, None, None);
        let (mut gnu_hash, mut hash, mut versym) = (None, None, None);
        // Read in blocks of entries, one bounds check each; an entry at the
        // very end of memory is read alone.
        let mut index = 0;
        'entries: while index < MAX_DYNAMIC {
            let at = dynamic.checked_add(index * 16)?;
            let block = match memory.bytes(at, DYNAMIC_BLOCK * 16) {
                Some(block) => block,
                None => memory.bytes(at, 16)?,
            };
            for entry in block.chunks_exact(16) {
                let (tag, value) = entry.split_at(8);
                let tag = u64::from_ne_bytes(tag.try_into().ok()?) as i64;
                let value = u64::from_ne_bytes(value.try_into().ok()?);
                match tag {
                    DT_NULL => break 'entries,
                    DT_HASH => hash = Some(value),
                    DT_STRTAB => strtab = Some(value),
                    DT_SYMTAB => symtab = Some(value),
                    DT_STRSZ => strsz = Some(value),
                    DT_SYMENT if value != SYM_SIZE => return None,
                    DT_GNU_HASH => gnu_hash = Some(value),
                    DT_VERSYM => versym = Some(value),
                    _ => {}
                }
                index += 1;
            }
        }
        let moved = relocated(memory, base, strtab?);
        let place = |value: u64| {
            if moved {
                value
            } else {
                value.wrapping_add(base)
            }
        };
        let tables = Tables {
            base,
            symtab: place(symtab?),
            strtab: place(strtab?),
            strsz: strsz.unwrap_or(u64::MAX),
            gnu_hash: gnu_hash.map(place),
            hash: hash.map(place),
            versym: versym.map(place),
        };
        (tables.gnu_hash.is_some() || tables.hash.is_some()).then_some(tables)
    }

    /// The definition of `name` (without its NUL) in this object, as
    /// `dlsym` finds it: the first matching definition with no version, or
    /// else the one non-hidden versioned definition. TLS symbols, whose
    /// address is per thread, are not answered.
    pub fn find(&self, memory: &(impl Memory + ?Sized), name: &[u8]) -> Option<Symbol> {
        let mut search = Search {
            tables: self,
            memory,
            name,
            versioned: None,
            versions: 0,
        };
        let exact = match self.gnu_hash {
            Some(table) => search.gnu(table, gnu_hash(name)),
            None => search.sysv(self.hash?, sysv_hash(name)),
        };
        let index = exact.or(if search.versions == 1 {
            search.versioned
        } else {
            None
        })?;
        self.symbol(memory, index)
    }

    /// The address of symbol `index`, once chosen: `None` for a local one,
    /// which the loader ignores, and for TLS.
    fn symbol(&self, memory: &(impl Memory + ?Sized), index: u64) -> Option<Symbol> {
        let at = self.symtab.checked_add(index.checked_mul(SYM_SIZE)?)?;
        let info = *memory.bytes(at.checked_add(4)?, 1)?.first()?;
        let shndx = read_u16(memory, at.checked_add(6)?)?;
        let value = read_u64(memory, at.checked_add(8)?)?;
        let kind = info & 0xf;
        if info >> 4 == STB_LOCAL || kind == STT_TLS {
            return None;
        }
        let address = if shndx == SHN_ABS {
            value
        } else {
            self.base.wrapping_add(value)
        };
        Some(Symbol {
            address,
            ifunc: kind == STT_GNU_IFUNC,
        })
    }
}

/// One name's walk through one object's hash chains.
struct Search<'a, M: Memory + ?Sized> {
    tables: &'a Tables,
    memory: &'a M,
    name: &'a [u8],
    /// The first non-hidden versioned match, and how many there were.
    versioned: Option<u64>,
    versions: u32,
}

impl<M: Memory + ?Sized> Search<'_, M> {
    /// Walks the GNU hash table at `table` for hash `wanted`: the index of
    /// an unversioned match, if any (versioned ones are noted).
    fn gnu(&mut self, table: u64, wanted: u32) -> Option<u64> {
        let memory = self.memory;
        let buckets = read_u32(memory, table)?;
        let offset = read_u32(memory, table.checked_add(4)?)?;
        let words = read_u32(memory, table.checked_add(8)?)?;
        let shift = read_u32(memory, table.checked_add(12)?)?;
        if buckets == 0 || words == 0 {
            return None;
        }
        let bloom = table.checked_add(16)?;
        let word_index = u64::from((wanted / 64) & (words - 1));
        let word = read_u64(memory, bloom.checked_add(word_index * 8)?)?;
        let mask = 1u64 << (wanted % 64) | 1u64 << (wanted.checked_shr(shift).unwrap_or(0) % 64);
        if word & mask != mask {
            return None;
        }
        let bucket_at = bloom.checked_add(u64::from(words) * 8)?;
        let chain = bucket_at.checked_add(u64::from(buckets) * 4)?;
        let mut index = read_u32(
            memory,
            bucket_at.checked_add(u64::from(wanted % buckets) * 4)?,
        )?;
        if index < offset {
            return None;
        }
        // Each step reads the next chain word: the walk ends at the chain's
        // end mark or where memory ends, and never goes back.
        loop {
            let at = chain.checked_add(u64::from(index - offset) * 4)?;
            let hash = read_u32(memory, at)?;
            if hash | 1 == wanted | 1
                && let Some(found) = self.candidate(u64::from(index))
            {
                return Some(found);
            }
            if hash & 1 != 0 {
                return None;
            }
            index = index.checked_add(1)?;
        }
    }

    /// Walks the SysV hash table at `table` for hash `wanted`.
    fn sysv(&mut self, table: u64, wanted: u32) -> Option<u64> {
        let memory = self.memory;
        let buckets = read_u32(memory, table)?;
        let chains = read_u32(memory, table.checked_add(4)?)?;
        if buckets == 0 {
            return None;
        }
        let bucket_at = table.checked_add(8)?;
        let chain = bucket_at.checked_add(u64::from(buckets) * 4)?;
        // The whole chain array must be there: that bounds the walk below
        // by the memory's size, not by a count a table can make 2^32.
        memory.bytes(chain, u64::from(chains) * 4)?;
        let mut index = read_u32(
            memory,
            bucket_at.checked_add(u64::from(wanted % buckets) * 4)?,
        )?;
        // A chain has at most as many links as there are symbols; a longer
        // walk is a loop in a malformed table.
        for _ in 0..chains {
            if index == 0 || index >= chains {
                return None;
            }
            if let Some(found) = self.candidate(u64::from(index)) {
                return Some(found);
            }
            index = read_u32(memory, chain.checked_add(u64::from(index) * 4)?)?;
        }
        None
    }

    /// Symbol `index` when it is a definition of the name with no version;
    /// a non-hidden versioned definition is noted instead (glibc's
    /// `check_match` for a lookup without a version, as dlsym makes).
    fn candidate(&mut self, index: u64) -> Option<u64> {
        let memory = self.memory;
        let tables = self.tables;
        let at = tables.symtab.checked_add(index.checked_mul(SYM_SIZE)?)?;
        let name_at = u64::from(read_u32(memory, at)?);
        let info = *memory.bytes(at.checked_add(4)?, 1)?.first()?;
        let shndx = read_u16(memory, at.checked_add(6)?)?;
        let value = read_u64(memory, at.checked_add(8)?)?;
        let kind = info & 0xf;
        // As glibc's and musl's dlsym: a symbol with no value is no
        // definition; an undefined one with a value (a program's PLT entry
        // standing for a function's address) is taken.
        if value == 0 && shndx != SHN_ABS && kind != STT_TLS {
            return None;
        }
        if ALLOWED_TYPES & 1u32.checked_shl(u32::from(kind)).unwrap_or(0) == 0 {
            return None;
        }
        let len = self.name.len() as u64 + 1;
        if name_at.checked_add(len)? > tables.strsz {
            return None;
        }
        let stored = memory.bytes(tables.strtab.checked_add(name_at)?, len)?;
        // Compared byte by byte: a slice comparison would call bcmp, one
        // more name for the loader to bind in every process.
        let (&end, stored) = stored.split_last()?;
        if end != 0 || !stored.iter().zip(self.name).all(|(a, b)| a == b) {
            return None;
        }
        if let Some(versym) = tables.versym {
            let version = read_u16(memory, versym.checked_add(index * 2)?)?;
            if version & VERSION_INDEX >= 2 {
                if version & VERSION_HIDDEN == 0 {
                    self.versions += 1;
                    if self.versions == 1 {
                        self.versioned = Some(index);
                    }
                }
                return None;
            }
        }
        Some(index)
    }
}

/// The GNU hash of a name (`dl_new_hash`).
pub fn gnu_hash(name: &[u8]) -> u32 {
    name.iter().fold(5381u32, |hash, &byte| {
        hash.wrapping_mul(33).wrapping_add(u32::from(byte))
    })
}

/// The SysV ELF hash of a name (`_dl_elf_hash`).
pub fn sysv_hash(name: &[u8]) -> u32 {
    name.iter().fold(0u32, |hash, &byte| {
        let hash = (hash << 4).wrapping_add(u32::from(byte));
        let high = hash & 0xf000_0000;
        (hash ^ (high >> 24)) & !high
    })
}
