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

use std::fs;
use std::path::Path;

use crate::common::{Outcome, Run, TempDir, command, whole_machine_sync};

/// The same inputs for every run: text files, a C file, a package tree.
fn fixture(dir: &Path) {
    let src = dir.join("src");
    fs::create_dir_all(src.join("sub/deeper")).expect("create the fixture");
    let mut seed: u32 = 12345;
    let mut lines = String::new();
    for n in 0..20_000 {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
        lines.push_str(&format!(
            "{} line {n} {}\n",
            seed % 9973,
            "word ".repeat((seed % 7) as usize)
        ));
    }
    fs::write(src.join("big.txt"), &lines).expect("write big.txt");
    fs::write(src.join("a.txt"), "alpha\n").expect("write a.txt");
    fs::write(src.join("sub/b.txt"), "beta\n".repeat(500)).expect("write b.txt");
    fs::write(
        src.join("sub/deeper/c.bin"),
        (0..=255u8).cycle().take(70_000).collect::<Vec<u8>>(),
    )
    .expect("write c.bin");
    fs::write(
        dir.join("hello.c"),
        "#include <stdio.h>\n#include <unistd.h>\nint main(void) { FILE *f = fopen(\"out.txt\", \"w\");\n\
         fprintf(f, \"hello\\n\"); fflush(f); fsync(fileno(f)); fclose(f); puts(\"compiled and ran\"); return 3; }\n",
    )
    .expect("write hello.c");
    let doc = dir.join("pkg/usr/share/doc/corpus-test");
    fs::create_dir_all(&doc).expect("create the package tree");
    fs::create_dir_all(dir.join("pkg/DEBIAN")).expect("create DEBIAN");
    fs::write(doc.join("README"), "a package built by the corpus test\n").expect("write README");
    fs::write(
        dir.join("pkg/DEBIAN/control"),
        "Package: corpus-test\nVersion: 1.0\nArchitecture: all\nMaintainer: Nobody <nobody@invalid>\n\
         Description: corpus test package\n",
    )
    .expect("write control");
}

/// The calls the control is traced for: every way to ask for durability.
const DURABILITY_CALLS: &[&str] = &[
    "fsync",
    "fdatasync",
    "sync",
    "syncfs",
    "sync_file_range",
    "msync",
    "open",
    "openat",
    "pwritev2",
];

/// How many traced calls of the control asked the kernel for durability:
/// a sync call, an msync with MS_SYNC, an open with O_SYNC or O_DSYNC, a
/// write with RWF_SYNC or RWF_DSYNC.
fn durability_requests(control: &Outcome) -> usize {
    let syncs = ["fsync", "fdatasync", "sync", "syncfs", "sync_file_range"];
    let flagged = ["MS_SYNC", "O_SYNC", "O_DSYNC", "RWF_SYNC", "RWF_DSYNC"];
    let asked = |call: &&str| !call.contains("resumed>") && !call.contains(" = -1 ");
    syncs
        .iter()
        .map(|name| control.calls_of(name).into_iter().filter(asked).count())
        .sum::<usize>()
        + control
            .calls
            .iter()
            .filter(|line| flagged.iter().any(|flag| line.contains(flag)))
            .count()
}

/// What one eaten step's report file says: (lines, durability requests
/// skipped), from `pid=P name=N fsync=1 sync=0 ...` lines.
fn reported(report: &Path) -> (usize, u64) {
    let text = fs::read_to_string(report).expect("read the report");
    let skipped = text
        .split_whitespace()
        .filter(|field| !field.starts_with("pid=") && !field.starts_with("name="))
        .filter_map(|field| field.split_once('=')?.1.parse::<u64>().ok())
        .sum();
    (text.lines().count(), skipped)
}

/// Runs `steps` in a fresh fixture, through `eatmydata` when `eat` is set;
/// returns a transcript of every step and the named files' contents, and
/// for each step what shows the library's part: for the control, the
/// durability requests that reached the kernel; under the library, the
/// report lines and the requests they say were skipped.
fn transcript(eat: bool, steps: &[&[&str]], files: &[&str]) -> (Vec<String>, Vec<(usize, u64)>) {
    let dir = TempDir::new(if eat {
        "corpus-eaten"
    } else {
        "corpus-control"
    });
    let reports = TempDir::new("corpus-report");
    fixture(dir.path());
    let mut out = Vec::new();
    let mut proof = Vec::new();
    for (n, step) in steps.iter().enumerate() {
        let step = step.strip_prefix(&[FAILS]).unwrap_or(step);
        // Outside the fixture, which the transcripts compare; the library
        // appends to it, never creates it.
        let report = reports.join(format!("step{n}"));
        fs::write(&report, "").expect("create the report file");
        let run = if eat {
            Run::new(command())
                .args(step)
                .env("EATMYDATA_REPORT", &report)
        } else {
            Run::new(step[0]).args(&step[1..]).trace(DURABILITY_CALLS)
        };
        let run = run
            .cwd(dir.path())
            .env("HOME", dir.path())
            .env("LC_ALL", "C")
            .env("TZ", "UTC")
            .env("SOURCE_DATE_EPOCH", "1700000000")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "A U Thor")
            .env("GIT_AUTHOR_EMAIL", "author@example.invalid")
            .env("GIT_COMMITTER_NAME", "C O Mitter")
            .env("GIT_COMMITTER_EMAIL", "committer@example.invalid")
            .env("GIT_AUTHOR_DATE", "1700000000 +0000")
            .env("GIT_COMMITTER_DATE", "1700000000 +0000")
            .run();
        proof.push(if eat {
            reported(&report)
        } else {
            (0, durability_requests(&run) as u64)
        });
        let scrub = |text: String| text.replace(&dir.path().display().to_string(), "$DIR");
        out.push(format!(
            "$ {}\nexit: {:?}\nstdout:\n{}\nstderr:\n{}",
            step.join(" "),
            run.output.status.code(),
            scrub(run.stdout()),
            scrub(run.stderr())
        ));
    }
    for file in files {
        let bytes =
            fs::read(dir.join(file)).unwrap_or_else(|e| format!("unreadable: {e}").into_bytes());
        out.push(format!("{file}: {} bytes, {:?}", bytes.len(), fnv(&bytes)));
    }
    (out, proof)
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Marks a step meant to fail: `&[FAILS, "tar", "-xf", "missing.tar"]`.
const FAILS: &str = "!";

/// The case passes when both transcripts agree step by step, and the
/// control's steps all did what they were meant to: each exited 0, or with
/// an error status when marked [`FAILS`].
///
/// Each eaten step must show the library loaded (a report line), and
/// every step whose control asked for durability must report a skip.
fn same_with_and_without(steps: &[&[&str]], files: &[&str]) {
    // A control that may call sync(2) runs alone (see common::lock).
    let words = steps.iter().flat_map(|step| step.iter());
    let syncs_all = words
        .flat_map(|arg| arg.split(|c: char| !c.is_ascii_alphanumeric() && c != '_'))
        .any(|word| word == "sync");
    let (control, asked) = if syncs_all {
        whole_machine_sync(|| transcript(false, steps, files))
    } else {
        transcript(false, steps, files)
    };
    for (step, text) in steps.iter().zip(&control) {
        let meant = if step.first() == Some(&FAILS) {
            !text.contains("\nexit: Some(0)\n") && !text.contains("\nexit: None\n")
        } else {
            text.contains("\nexit: Some(0)\n")
        };
        assert!(
            meant,
            "the control of {step:?} did not do what it meant:\n{text}"
        );
    }
    let (eaten, skipped) = transcript(true, steps, files);
    for (c, e) in control.iter().zip(&eaten) {
        assert_eq!(e, c, "with eatmydata (left) and without (right) differ");
    }
    assert_eq!(control.len(), eaten.len());
    for ((step, (_, asked)), (lines, skipped)) in steps.iter().zip(&asked).zip(&skipped) {
        assert!(
            *lines > 0,
            "{step:?}: no process reported: the library was not loaded"
        );
        assert!(
            *asked == 0 || *skipped > 0,
            "{step:?}: {asked} durability requests reached the kernel without the library, none reported skipped with it"
        );
    }
}

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
