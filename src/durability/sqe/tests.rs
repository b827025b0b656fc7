use super::super::{dropped_open_flags, sqe};
use super::{Rewrite, Target};

fn entry(opcode: u8) -> [u8; sqe::SIZE] {
    let mut entry = [0; sqe::SIZE];
    entry[sqe::OPCODE] = opcode;
    entry[sqe::FD..sqe::FD + 4].copy_from_slice(&7i32.to_ne_bytes());
    entry[sqe::USER_DATA..sqe::USER_DATA + 8].copy_from_slice(&0xfeed_u64.to_ne_bytes());
    entry
}

fn set_u32(entry: &mut [u8; sqe::SIZE], at: usize, value: u32) {
    entry[at..at + 4].copy_from_slice(&value.to_ne_bytes());
}

const DROPPED: u32 = dropped_open_flags(false) as u32;

#[test]
fn a_sync_entry_on_a_disk_becomes_a_nop_keeping_its_chain() {
    let mut fsync = entry(sqe::OP_FSYNC);
    fsync[sqe::FLAGS] = 1 << 2; // IOSQE_IO_LINK
    set_u32(&mut fsync, sqe::OP_FLAGS, 1); // IORING_FSYNC_DATASYNC
    set_u32(&mut fsync, sqe::LEN, 4096);
    let mut asked = None;
    let rewrite = sqe::rewrite(&fsync, DROPPED, |target| {
        asked = Some(target);
        true
    });
    assert_eq!(asked, Some(Target::Fd(7)));
    assert_eq!(rewrite, Rewrite::Nop);
    let mut nop = fsync;
    sqe::apply(&mut nop, rewrite);
    let mut expected = entry(sqe::OP_NOP);
    expected[sqe::FLAGS] = 1 << 2;
    assert_eq!(nop, expected);
}

#[test]
fn a_sync_entry_the_kernel_would_refuse_or_not_on_a_disk_is_kept() {
    let on_disk = |_| true;
    let fsync = entry(sqe::OP_FSYNC);
    assert_eq!(sqe::rewrite(&fsync, DROPPED, |_| false), Rewrite::Keep);
    let mut unknown_flags = fsync;
    set_u32(&mut unknown_flags, sqe::OP_FLAGS, 2);
    assert_eq!(
        sqe::rewrite(&unknown_flags, DROPPED, on_disk),
        Rewrite::Keep
    );
    let mut addr = fsync;
    addr[sqe::ADDR] = 1;
    assert_eq!(sqe::rewrite(&addr, DROPPED, on_disk), Rewrite::Keep);
    let mut buffer_select = fsync;
    buffer_select[sqe::FLAGS] = 1 << 5;
    assert_eq!(
        sqe::rewrite(&buffer_select, DROPPED, on_disk),
        Rewrite::Keep
    );
    let mut ioprio = fsync;
    ioprio[sqe::IOPRIO] = 1;
    assert_eq!(sqe::rewrite(&ioprio, DROPPED, on_disk), Rewrite::Keep);
    let mut range = entry(sqe::OP_SYNC_FILE_RANGE);
    set_u32(&mut range, sqe::OP_FLAGS, 8);
    assert_eq!(sqe::rewrite(&range, DROPPED, on_disk), Rewrite::Keep);
    set_u32(&mut range, sqe::OP_FLAGS, libc::SYNC_FILE_RANGE_WRITE);
    assert_eq!(sqe::rewrite(&range, DROPPED, on_disk), Rewrite::Nop);
    range[sqe::OFF + 7] = 0x80; // a negative offset
    assert_eq!(sqe::rewrite(&range, DROPPED, on_disk), Rewrite::Keep);
}

#[test]
fn a_fixed_file_is_asked_by_its_slot() {
    let mut fsync = entry(sqe::OP_FSYNC);
    fsync[sqe::FLAGS] = sqe::FIXED_FILE;
    let mut asked = None;
    sqe::rewrite(&fsync, DROPPED, |target| {
        asked = Some(target);
        false
    });
    assert_eq!(asked, Some(Target::Fixed(7)));
}

#[test]
fn writes_and_opens_lose_their_sync_flags_only() {
    let mut write = entry(sqe::OP_WRITE);
    let rwf = (libc::RWF_DSYNC | libc::RWF_NOWAIT) as u32;
    set_u32(&mut write, sqe::OP_FLAGS, rwf);
    let rewrite = sqe::rewrite(&write, DROPPED, |_| unreachable!());
    assert_eq!(rewrite, Rewrite::OpFlags(libc::RWF_NOWAIT as u32));
    sqe::apply(&mut write, rewrite);
    assert_eq!(
        write[sqe::OP_FLAGS..sqe::OP_FLAGS + 4],
        (libc::RWF_NOWAIT as u32).to_ne_bytes()
    );
    let plain = entry(sqe::OP_WRITEV);
    assert_eq!(sqe::rewrite(&plain, DROPPED, |_| false), Rewrite::Keep);
    let mut open = entry(sqe::OP_OPENAT);
    set_u32(
        &mut open,
        sqe::OP_FLAGS,
        (libc::O_CREAT | libc::O_SYNC) as u32,
    );
    assert_eq!(
        sqe::rewrite(&open, DROPPED, |_| false),
        Rewrite::OpFlags(libc::O_CREAT as u32)
    );
    let mut open2 = entry(sqe::OP_OPENAT2);
    open2[sqe::OFF..sqe::OFF + 8].copy_from_slice(&0x1000_u64.to_ne_bytes());
    set_u32(&mut open2, sqe::LEN, 24);
    assert_eq!(
        sqe::rewrite(&open2, DROPPED, |_| false),
        Rewrite::OpenHow {
            address: 0x1000,
            size: 24
        }
    );
    // An OPENAT entry the kernel refuses as asked keeps its flags.
    let mut refused = entry(sqe::OP_OPENAT);
    let tmpfile_rdonly = (libc::O_TMPFILE | libc::O_RDONLY | libc::O_SYNC) as u32;
    set_u32(&mut refused, sqe::OP_FLAGS, tmpfile_rdonly);
    assert_eq!(sqe::rewrite(&refused, DROPPED, |_| false), Rewrite::Keep);
    assert_eq!(
        sqe::rewrite(&entry(sqe::OP_NOP), DROPPED, |_| true),
        Rewrite::Keep
    );
    // Every opcode rewrite may change is one may_rewrite names.
    for opcode in 0..=u8::MAX {
        let mut any = entry(opcode);
        set_u32(&mut any, sqe::OP_FLAGS, u32::MAX);
        if sqe::rewrite(&any, DROPPED, |_| true) != Rewrite::Keep {
            assert!(sqe::may_rewrite(opcode), "{opcode}");
        }
    }
    assert!(!sqe::may_rewrite(sqe::OP_NOP));
}

#[test]
fn an_openat2_without_resolve_becomes_an_openat_and_its_how_is_left_alone() {
    use super::super::open::OpenHow;
    let sync = (libc::O_WRONLY | libc::O_CREAT | libc::O_SYNC) as u64;
    let how = |flags: u64, mode: u64, resolve: u64| {
        let mut bytes = [0u8; 32];
        for (i, word) in [flags, mode, resolve].iter().enumerate() {
            bytes[i * 8..i * 8 + 8].copy_from_slice(&word.to_ne_bytes());
        }
        bytes
    };
    let asked = sqe::how_of(&how(sync, 0o644, 0), 24);
    let rewrite = sqe::openat2(asked, DROPPED);
    let flags = (libc::O_WRONLY | libc::O_CREAT) as u32;
    assert_eq!(rewrite, Rewrite::Openat { flags, mode: 0o644 });
    let mut open2 = entry(sqe::OP_OPENAT2);
    open2[sqe::FLAGS] = 1 << 2; // a link
    open2[sqe::OFF..sqe::OFF + 8].copy_from_slice(&0x1000_u64.to_ne_bytes());
    open2[sqe::ADDR..sqe::ADDR + 8].copy_from_slice(&0x2000_u64.to_ne_bytes());
    set_u32(&mut open2, sqe::LEN, 24);
    open2[sqe::SPLICE_FD_IN] = 3; // file_index
    let mut openat = open2;
    sqe::apply(&mut openat, rewrite);
    let mut expected = open2;
    expected[sqe::OPCODE] = sqe::OP_OPENAT;
    expected[sqe::OFF..sqe::OFF + 8].copy_from_slice(&[0; 8]);
    set_u32(&mut expected, sqe::LEN, 0o644);
    set_u32(&mut expected, sqe::OP_FLAGS, flags);
    assert_eq!(openat, expected);
    // Resolve flags, no sync flag, a how the kernel refuses, a
    // nonzero tail, a size it refuses: as asked.
    for (bytes, size) in [
        (how(sync, 0o644, 0x08), 24),
        (how(libc::O_RDONLY as u64, 0, 0), 24),
        (how((libc::O_PATH | libc::O_SYNC) as u64, 0, 0), 24),
        (how(libc::O_SYNC as u64 | 1 << 40, 0, 0), 24),
        (
            how(libc::O_WRONLY as u64 | libc::O_SYNC as u64, 0o644, 0),
            24,
        ),
    ] {
        assert_eq!(
            sqe::openat2(sqe::how_of(&bytes, size), DROPPED),
            Rewrite::Keep
        );
    }
    let mut tail = how(sync, 0o644, 0);
    tail[31] = 1;
    assert_eq!(sqe::how_of(&tail, 32), None);
    assert!(sqe::how_of(&how(sync, 0, 0), 32).is_some());
    assert_eq!(sqe::how_of(&how(sync, 0, 0), 16), None);
    assert_eq!(sqe::how_of(&how(sync, 0, 0)[..20], 24), None);
    let read: Option<OpenHow> = sqe::how_of(&how(sync, 0o600, 0), 24);
    assert_eq!(read.map(|how| how.mode), Some(0o600));
}

/// The opcodes and entry offsets used here, as the kernel's header
/// (`linux/io_uring.h`, from the system's headers) has them.
#[test]
fn opcodes_and_offsets_are_the_kernel_headers() {
    use std::process::Command;
    let dir = std::env::temp_dir().join(format!(
        "eatmydata-sqe-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("sqe.c");
    let fields = [
        ("opcode", sqe::OPCODE),
        ("flags", sqe::FLAGS),
        ("ioprio", sqe::IOPRIO),
        ("fd", sqe::FD),
        ("addr2", sqe::OFF),
        ("addr", sqe::ADDR),
        ("len", sqe::LEN),
        ("rw_flags", sqe::OP_FLAGS),
        ("fsync_flags", sqe::OP_FLAGS),
        ("open_flags", sqe::OP_FLAGS),
        ("sync_range_flags", sqe::OP_FLAGS),
        ("user_data", sqe::USER_DATA),
        ("buf_index", sqe::BUF_INDEX),
        ("personality", sqe::PERSONALITY),
        ("splice_fd_in", sqe::SPLICE_FD_IN),
        ("addr3", sqe::ADDR3),
    ];
    let ops = [
        ("IORING_OP_NOP", sqe::OP_NOP),
        ("IORING_OP_WRITEV", sqe::OP_WRITEV),
        ("IORING_OP_FSYNC", sqe::OP_FSYNC),
        ("IORING_OP_WRITE_FIXED", sqe::OP_WRITE_FIXED),
        ("IORING_OP_SYNC_FILE_RANGE", sqe::OP_SYNC_FILE_RANGE),
        ("IORING_OP_OPENAT", sqe::OP_OPENAT),
        ("IORING_OP_WRITE", sqe::OP_WRITE),
        ("IORING_OP_OPENAT2", sqe::OP_OPENAT2),
    ];
    let mut program = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include <linux/io_uring.h>\n\
         int main(void) {\n",
    );
    for (field, _) in fields {
        program += &format!("printf(\"%zu \", offsetof(struct io_uring_sqe, {field}));\n");
    }
    for (op, _) in ops {
        program += &format!("printf(\"%d \", {op});\n");
    }
    program += "printf(\"%d %d\", IOSQE_FIXED_FILE, IORING_FSYNC_DATASYNC);\n";
    program += "#ifdef IORING_OP_WRITEV_FIXED\nprintf(\" %d\", IORING_OP_WRITEV_FIXED);\n#endif\n";
    program += "return 0; }\n";
    std::fs::write(&source, program).unwrap();
    let binary = dir.join("sqe");
    let built = Command::new("cc")
        .arg("-o")
        .arg(&binary)
        .arg(&source)
        .status();
    assert!(built.unwrap().success(), "cc");
    let output = Command::new(&binary).output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let mut ours: Vec<String> = fields.iter().map(|(_, at)| at.to_string()).collect();
    ours.extend(ops.iter().map(|(_, op)| op.to_string()));
    ours.push(format!("{} 1", sqe::FIXED_FILE));
    let headers = String::from_utf8_lossy(&output.stdout).to_string();
    let ours = ours.join(" ");
    // A header new enough to name WRITEV_FIXED must agree on it too.
    let expected = match headers.strip_prefix(&ours) {
        Some("") => ours.clone(),
        Some(_) => format!("{ours} {}", sqe::OP_WRITEV_FIXED),
        None => ours.clone(),
    };
    assert_eq!(headers.trim(), expected);
}

#[test]
fn with_kept_mounts_a_write_keeps_rwf_sync_unless_its_mount_is_eaten() {
    let mut write = entry(sqe::OP_WRITE);
    set_u32(&mut write, sqe::OP_FLAGS, libc::RWF_DSYNC as u32);
    let dropped = sqe::rewrite(&write, DROPPED, |_| true);
    assert_eq!(dropped, Rewrite::OpFlags(0));
    let mut asked = None;
    let eaten = sqe::scoped(&write, dropped, |fd| {
        asked = Some(fd);
        true
    });
    assert_eq!((eaten, asked), (dropped, Some(7)));
    assert_eq!(sqe::scoped(&write, dropped, |_| false), Rewrite::Keep);
    let mut fixed = write;
    fixed[sqe::FLAGS] = sqe::FIXED_FILE;
    let never = |_| panic!("a fixed slot's mount is not asked");
    assert_eq!(sqe::scoped(&fixed, dropped, never), Rewrite::Keep);
    // Other rewrites stand: a sync entry asked its mount already.
    let fsync = entry(sqe::OP_FSYNC);
    assert_eq!(sqe::scoped(&fsync, Rewrite::Nop, never), Rewrite::Nop);
}
