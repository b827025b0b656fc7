//! The library never breaks its host: everyday programs, run through the
//! `eatmydata` command as a user would, give the same exit status, output
//! and files as without it.
//!
//! Each case runs twice in fresh copies of the same fixture, once under
//! `eatmydata` and once plainly. Nondeterminism is removed at the source
//! (fixed commit dates, `SOURCE_DATE_EPOCH`, `tar --mtime`, `gzip -n`), and
//! the only normalisation is the scratch folder's name.
//!
//! The library must also be seen at work, or the runs would agree just as
//! well without it: the control runs under strace, and every step whose
//! control asked the kernel for durability reports, under the library
//! (`EATMYDATA_REPORT`), that it skipped something; every eaten step
//! reports at all, so the library was loaded in it.

mod harness; // the fixture, the two transcripts and what proves the library acted

use crate::common::{Run, TempDir, command};
use harness::{FAILS, fixture, same_with_and_without};

#[test]
fn python3() {
    let script = "import os, hashlib, sqlite3, subprocess\n\
        fd = os.open('p.bin', os.O_WRONLY | os.O_CREAT | os.O_SYNC, 0o640)\n\
        os.write(fd, b'x' * 100000); os.fsync(fd); os.fdatasync(fd); os.close(fd)\n\
        print(oct(os.stat('p.bin').st_mode & 0o777), hashlib.sha256(open('p.bin','rb').read()).hexdigest())\n\
        db = sqlite3.connect('p.db'); db.execute('create table t(x)')\n\
        for i in range(200):\n    with db: db.execute('insert into t values (?)', (i,))\n\
        print(db.execute('select count(*), sum(x) from t').fetchone())\n\
        print(subprocess.run(['sort', '-r', 'src/a.txt', 'src/sub/b.txt'], capture_output=True).stdout[:20])\n\
        os.sync(); print('done')\n";
    same_with_and_without(
        &[
            &["python3", "-c", script],
            &[FAILS, "python3", "-c", "import sys; sys.exit(7)"],
        ],
        &["p.bin"],
    );
}

#[test]
fn perl() {
    let script = "use IO::Handle; use Fcntl; sysopen(my $f, 'q.txt', O_WRONLY|O_CREAT|O_SYNC, 0600) or die;\
        for (1..1000) { print $f \"line $_\\n\"; } $f->flush; $f->sync or die \"sync: $!\"; close $f;\
        my @kids = map { my $p = fork; if (!$p) { open my $g, '>', \"kid$_\" or die; print $g $_; close $g; exit $_ } $p } 1..8;\
        my $sum = 0; for (@kids) { waitpid($_, 0); $sum += $? >> 8 } print \"kids $sum\\n\"; print -s 'q.txt', \"\\n\"; exit 4";
    same_with_and_without(&[&[FAILS, "perl", "-e", script]], &["q.txt", "kid3"]);
}

#[test]
fn git_init_add_commit_gc() {
    let git = |args: &'static [&'static str]| args;
    same_with_and_without(
        &[
            git(&["git", "init", "-q", "-b", "main", "src"]),
            git(&[
                "git",
                "-C",
                "src",
                "-c",
                "core.fsync=all",
                "-c",
                "core.fsyncMethod=fsync",
                "add",
                ".",
            ]),
            git(&[
                "git",
                "-C",
                "src",
                "-c",
                "core.fsync=all",
                "commit",
                "-q",
                "-m",
                "first",
            ]),
            git(&["git", "-C", "src", "mv", "a.txt", "moved.txt"]),
            git(&[
                "git",
                "-C",
                "src",
                "-c",
                "core.fsync=all",
                "commit",
                "-q",
                "-m",
                "second",
            ]),
            git(&[
                "git",
                "-C",
                "src",
                "-c",
                "core.fsync=all",
                "gc",
                "--quiet",
                "--prune=now",
            ]),
            git(&["git", "-C", "src", "fsck", "--full", "--strict"]),
            git(&["git", "-C", "src", "log", "--format=%H %an %ad %s"]),
            git(&["git", "-C", "src", "count-objects", "-v"]),
            git(&["git", "-C", "src", "status", "--porcelain"]),
            git(&[FAILS, "git", "-C", "src", "show", "HEAD~5"]),
        ],
        &[],
    );
}

#[test]
fn tar_create_and_extract() {
    let create = [
        "tar",
        "--sort=name",
        "--mtime=@1700000000",
        "--owner=0",
        "--group=0",
        "--numeric-owner",
    ];
    same_with_and_without(
        &[
            &[&create[..], &["-cf", "a.tar", "src"]].concat(),
            &["mkdir", "out"],
            &["tar", "-xf", "a.tar", "-C", "out"],
            &["diff", "-r", "src", "out/src"],
            &["tar", "-tvf", "a.tar"],
            &[FAILS, "tar", "-xf", "missing.tar"],
        ],
        &["a.tar"],
    );
}

#[test]
fn cp_sort_gzip_find() {
    same_with_and_without(
        &[
            &["cp", "-r", "src", "copy"],
            &[FAILS, "cp", "src/big.txt", "src/nope", "copy/sub"],
            &[FAILS, "diff", "-r", "src", "copy"],
            &["sort", "-n", "-o", "sorted.txt", "src/big.txt"],
            &["sort", "-u", "-k2,2", "src/big.txt"],
            &["gzip", "-n", "-9", "-k", "sorted.txt"],
            &["gzip", "-t", "sorted.txt.gz"],
            &["gzip", "-dc", "sorted.txt.gz"],
            &[
                "sh",
                "-c",
                "find . -name '*.txt' -size +1k -printf '%p %s %m\\n' | sort",
            ],
            &[
                FAILS,
                "find",
                "src",
                "-maxdepth",
                "0",
                "-newer",
                "nonexistent",
            ],
        ],
        &["sorted.txt", "sorted.txt.gz", "copy/sub/big.txt"],
    );
}

#[test]
fn sqlite3() {
    let sql = "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; CREATE TABLE t(x, y);\
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 5000) INSERT INTO t SELECT i, hex(i*i) FROM n;\
        BEGIN; DELETE FROM t WHERE x % 3 = 0; COMMIT; VACUUM; SELECT count(*), sum(x), max(y) FROM t;";
    same_with_and_without(
        &[
            &["sqlite3", "db.sqlite", sql],
            &[
                FAILS,
                "sqlite3",
                "db.sqlite",
                "PRAGMA integrity_check; SELECT * FROM nosuchtable;",
            ],
            &["sqlite3", "db.sqlite", ".dump"],
        ],
        &["db.sqlite"],
    );
}

#[test]
fn gcc_compiles_and_the_program_runs() {
    same_with_and_without(
        &[
            &["gcc", "-O2", "-Wall", "-o", "hello", "hello.c"],
            &[FAILS, "./hello"],
            &[FAILS, "gcc", "-c", "missing.c"],
        ],
        &["hello", "out.txt"],
    );
}

#[test]
fn dpkg_deb_builds_and_reads_a_package() {
    same_with_and_without(
        &[
            &[
                "dpkg-deb",
                "--root-owner-group",
                "-Zgzip",
                "--build",
                "pkg",
                "p.deb",
            ],
            &["dpkg-deb", "--info", "p.deb"],
            &["dpkg-deb", "--contents", "p.deb"],
            &["dpkg-deb", "-x", "p.deb", "unpacked"],
            &["diff", "-r", "pkg/usr", "unpacked/usr"],
        ],
        &["p.deb"],
    );
}

#[test]
fn sh_scripts_that_fork_heavily() {
    let script = "set -e; i=0; total=0\n\
        while [ $i -lt 300 ]; do total=$(( total + $(echo $i | wc -c) )); i=$((i+1)); done; echo total $total\n\
        for j in 1 2 3 4 5 6 7 8; do ( seq 1 2000 | sed \"s/^/$j:/\" > part$j; sync ) & done; wait\n\
        cat part* | sort -t: -k2,2n -k1,1n | md5sum\n\
        dd if=src/big.txt of=dd.out bs=4k conv=fsync oflag=sync status=none; cmp src/big.txt dd.out && echo same\n\
        sh -c 'exit 9' || echo child exited $?\n\
        exec sh -c 'echo exec works; exit 5'";
    same_with_and_without(&[&[FAILS, "sh", "-c", script]], &["part8", "dd.out"]);
}

#[test]
fn corpus_programs_really_run_under_the_library() {
    // The corpus would agree trivially if the library never loaded: show
    // that the same kind of steps make syncs without it and none with it.
    let dir = TempDir::new("corpus-proof");
    fixture(dir.path());
    Run::new("git")
        .args(["init", "-q", "src"])
        .cwd(dir.path())
        .run()
        .success();
    let steps: [&[&str]; 3] = [
        &[
            "python3",
            "-c",
            "import os; f = os.open('x', os.O_WRONLY | os.O_CREAT); os.fsync(f)",
        ],
        &[
            "git",
            "-C",
            "src",
            "-c",
            "core.fsync=all",
            "-c",
            "core.fsyncMethod=fsync",
            "add",
            ".",
        ],
        &[
            "dd",
            "if=src/big.txt",
            "of=dd.out",
            "conv=fsync",
            "status=none",
        ],
    ];
    for step in steps {
        let control = Run::new(step[0])
            .args(&step[1..])
            .cwd(dir.path())
            .trace(&["fsync", "fdatasync"])
            .run()
            .success();
        assert!(
            !control.calls_of("fsync").is_empty(),
            "{step:?} makes no fsync even without the library"
        );
        let eaten = Run::new(command())
            .args(step)
            .cwd(dir.path())
            .trace(&["fsync", "fdatasync"])
            .run()
            .success();
        assert_eq!(
            eaten.calls_of("fsync"),
            Vec::<&str>::new(),
            "{step:?} under eatmydata"
        );
    }
}
