//! The corpus's machinery: the fixture every case starts from, a
//! transcript of each run, and what shows the library acted: the
//! durability requests the control made (strace), the skips the library
//! reported for the same steps (`EATMYDATA_REPORT`).

use std::fs;
use std::path::Path;

use crate::common::{Outcome, Run, TempDir, command, whole_machine_sync};

/// The same inputs for every run: text files, a C file, a package tree.
pub fn fixture(dir: &Path) {
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
pub const FAILS: &str = "!";

/// The case passes when both transcripts agree step by step, and the
/// control's steps all did what they were meant to: each exited 0, or with
/// an error status when marked [`FAILS`].
///
/// Each eaten step must show the library loaded (a report line), and
/// every step whose control asked for durability must report a skip.
pub fn same_with_and_without(steps: &[&[&str]], files: &[&str]) {
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
