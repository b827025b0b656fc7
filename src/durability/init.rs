//! The inits a program may be, and the program each runs: `docker run
//! --init` makes the container's process `/sbin/docker-init -- PROGRAM
//! ARGS` (tini, bound from the host), podman's `--init` `/run/podman-init
//! -- PROGRAM ARGS` (catatonit), an image may name tini, catatonit or
//! dumb-init as its entry point, and an entry script may `exec` one. The
//! user switchers of entry scripts are read the same way: the official
//! postgres, mariadb and redis images end in `exec gosu USER PROGRAM`
//! (gosu is a static Go program), Alpine's in `su-exec USER PROGRAM`.
//!
//! A static init reads no `LD_PRELOAD` and passes its environment on to
//! the program it runs, with no check between: so that program is judged
//! by the exec rule (`exec.rs`) in the init's place, by the runtime for
//! the container's process (`runtime/edit/program.rs`) and by the
//! library's exec wrapper for what a process executes (`preload/exec.rs`).
//! An init is known by its file's name here, and by being static there: a
//! dynamic init has the library loaded, whose exec wrapper judges what it
//! runs.
//!
//! Each init's options are read as its own parser reads them (getopt, and
//! getopt_long's unique prefixes for dumb-init's and catatonit's long
//! options): the program is the first argument that is neither an option
//! nor an option's argument, or the one after `--`. Where the init runs
//! nothing (no program, an option it refuses, `-h`, `--version`,
//! catatonit's pause mode `-P`) there is none. tini and catatonit are
//! built with glibc, whose getopt also reads options placed after the
//! program (until `--`): one that stops the init there stops it too. A
//! build on musl (tini-static-muslc) reads none past the program, which
//! runs the same program. Pure, on bytes, without allocating: the
//! arguments in, an index out.

/// An init whose program is judged in its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Init {
    /// tini: `docker-init`, `tini`, `tini-static` and its release names
    /// (`tini-amd64`, `tini-static-muslc-arm64`).
    Tini,
    /// catatonit: `catatonit`, podman's `podman-init`.
    Catatonit,
    /// dumb-init: `dumb-init` and its release names
    /// (`dumb-init_1.2.5_x86_64`).
    Dumb,
    /// A user switcher, `SWITCHER USER PROGRAM ARGS`: gosu (and its
    /// release names, `gosu-amd64`) and su-exec. Neither reads an option:
    /// gosu answers `--help`, `-h`, `-?`, `--version` and `-v` in the
    /// user's place and runs nothing, and a user that starts with a dash
    /// is no user either of them finds.
    Switch,
}

/// What a long option does.
#[derive(Clone, Copy, PartialEq)]
enum Long {
    /// Sets something; takes no argument.
    Flag,
    /// Takes an argument, `--name=value` or `--name value`.
    Argument,
    /// The init prints something and runs nothing.
    Stops,
}

/// How an init reads its command line.
struct Syntax {
    /// Its short options' letters.
    short: &'static [u8],
    /// Those that take an argument (joined, `-pSIGKILL`, or the next one).
    argument: &'static [u8],
    /// Those after which it runs nothing.
    stops: &'static [u8],
    /// Its long options; with none, any `--name` is refused.
    long: &'static [(&'static str, Long)],
    /// Options placed after the program are still the init's (glibc's
    /// getopt, by default), until `--`.
    permutes: bool,
}

/// tini 0.19 (`-R` is newer): `p:hvwgle:R:s`; `--version` only alone,
/// which is an option it refuses among others, and runs nothing either way.
const TINI: Syntax = Syntax {
    short: b"phvwgleRs",
    argument: b"peR",
    stops: b"hl",
    long: &[],
    permutes: true,
};

/// catatonit: `ghLPV` and `--version`; `-P` pauses, running nothing.
const CATATONIT: Syntax = Syntax {
    short: b"ghLPV",
    argument: b"",
    stops: b"hLPV",
    long: &[("version", Long::Stops)],
    permutes: true,
};

/// dumb-init: `+hvVcr:` (the `+`: nothing after the program is its).
const DUMB_INIT: Syntax = Syntax {
    short: b"hvVcr",
    argument: b"r",
    stops: b"hV",
    long: &[
        ("help", Long::Stops),
        ("single-child", Long::Flag),
        ("rewrite", Long::Argument),
        ("verbose", Long::Flag),
        ("version", Long::Stops),
    ],
    permutes: false,
};

/// What one argument is, to the init.
enum Read {
    /// The init's option; `true` when it takes the next argument too.
    Option(bool),
    /// Not an option.
    Operand,
    /// `--`: the options end.
    End,
    /// The init runs nothing.
    Stop,
}

impl Init {
    /// The init a program's file name (its last path component) names.
    pub fn named(file: &[u8]) -> Option<Init> {
        match file {
            b"docker-init" | b"tini" => Some(Init::Tini),
            b"catatonit" | b"podman-init" => Some(Init::Catatonit),
            b"dumb-init" => Some(Init::Dumb),
            b"gosu" | b"su-exec" => Some(Init::Switch),
            _ if file.starts_with(b"tini-") => Some(Init::Tini),
            _ if file.starts_with(b"dumb-init_") => Some(Init::Dumb),
            _ if file.starts_with(b"gosu-") => Some(Init::Switch),
            _ => None,
        }
    }

    fn syntax(self) -> Option<&'static Syntax> {
        match self {
            Init::Tini => Some(&TINI),
            Init::Catatonit => Some(&CATATONIT),
            Init::Dumb => Some(&DUMB_INIT),
            Init::Switch => None,
        }
    }

    /// Where the program the init runs is among its arguments (after its
    /// own name; `arg(n)` is the `n`th, `None` past the last): from there
    /// on is what it executes. `None` when it runs none.
    pub fn program<'a>(self, arg: impl Fn(usize) -> Option<&'a [u8]>) -> Option<usize> {
        let Some(syntax) = self.syntax() else {
            // A switcher: its user, then the program.
            let user = arg(0).filter(|user| !user.starts_with(b"-"))?;
            return (!user.is_empty() && arg(1).is_some()).then_some(1);
        };
        let mut found = None;
        let mut at = 0;
        while let Some(word) = arg(at) {
            match syntax.read(word) {
                Read::End => return found.or(arg(at + 1).map(|_| at + 1)),
                Read::Stop => return None,
                Read::Operand if !syntax.permutes => return Some(at),
                Read::Operand => {
                    found = found.or(Some(at));
                }
                Read::Option(false) => {}
                Read::Option(true) => {
                    // Its argument must be there; it is no operand.
                    at += 1;
                    arg(at)?;
                }
            }
            at += 1;
        }
        found
    }
}

impl Syntax {
    /// What `word` is, its next argument aside.
    fn read(&self, word: &[u8]) -> Read {
        if word == b"--" {
            return Read::End;
        }
        if let Some(long) = word.strip_prefix(b"--") {
            return self.read_long(long);
        }
        let Some(letters) = word.strip_prefix(b"-").filter(|l| !l.is_empty()) else {
            return Read::Operand;
        };
        for (at, letter) in letters.iter().enumerate() {
            if !self.short.contains(letter) || self.stops.contains(letter) {
                return Read::Stop;
            }
            if self.argument.contains(letter) {
                // The rest of the word is its argument, or the next one is.
                return Read::Option(at + 1 == letters.len());
            }
        }
        Read::Option(false)
    }

    /// `--name` or `--name=value`, named in full or by a prefix only one
    /// long option has (getopt_long's rule).
    fn read_long(&self, long: &[u8]) -> Read {
        let (name, value) = match long.iter().position(|&b| b == b'=') {
            Some(at) => {
                let (name, value) = long.split_at(at);
                (name, value.get(1..))
            }
            None => (long, None),
        };
        let full = |option: &&(&str, Long)| option.0.as_bytes() == name;
        let exact = self.long.iter().find(full);
        let prefix = |option: &&(&str, Long)| option.0.as_bytes().starts_with(name);
        let mut prefixed = self.long.iter().filter(prefix);
        let found = match (exact, prefixed.next(), prefixed.next()) {
            (Some(option), _, _) => option,
            (None, Some(option), None) => option,
            _ => return Read::Stop,
        };
        match (found.1, value) {
            (Long::Stops, _) | (Long::Flag, Some(_)) => Read::Stop,
            (Long::Flag, None) => Read::Option(false),
            (Long::Argument, value) => Read::Option(value.is_none()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The program's index in `args` (words split at spaces).
    fn program(init: Init, args: &str) -> Option<usize> {
        let args: Vec<&str> = args.split(' ').filter(|a| !a.is_empty()).collect();
        init.program(|at| args.get(at).map(|arg| arg.as_bytes()))
    }

    #[test]
    fn each_init_is_known_by_its_file_name() {
        for (name, init) in [
            ("docker-init", Init::Tini),
            ("tini", Init::Tini),
            ("tini-static", Init::Tini),
            ("tini-static-muslc-amd64", Init::Tini),
            ("tini-arm64", Init::Tini),
            ("catatonit", Init::Catatonit),
            ("podman-init", Init::Catatonit),
            ("dumb-init", Init::Dumb),
            ("dumb-init_1.2.5_x86_64", Init::Dumb),
            ("gosu", Init::Switch),
            ("gosu-amd64", Init::Switch),
            ("su-exec", Init::Switch),
        ] {
            assert_eq!(Init::named(name.as_bytes()), Some(init), "{name}");
        }
        for name in [
            "init",
            "tinit",
            "sh",
            "docker-init.sh",
            "dumb-initx",
            "gosux",
            "su",
            "",
        ] {
            assert_eq!(Init::named(name.as_bytes()), None, "{name}");
        }
    }

    #[test]
    fn every_init_runs_what_follows_two_dashes() {
        for init in [Init::Tini, Init::Catatonit, Init::Dumb] {
            assert_eq!(program(init, "-- prog a b"), Some(1));
            assert_eq!(program(init, "-- -prog"), Some(1), "after --, no option");
            assert_eq!(program(init, "-- -- x"), Some(1));
            assert_eq!(program(init, "prog -- a"), Some(0));
            assert_eq!(program(init, "prog"), Some(0), "no --");
            assert_eq!(program(init, "- a"), Some(0), "a lone dash is no option");
            assert_eq!(program(init, "--"), None, "-- last: nothing to run");
            assert_eq!(program(init, ""), None, "no arguments");
            assert_eq!(program(init, "-x prog"), None, "an option it refuses");
            assert_eq!(program(init, "-h prog"), None, "help");
            assert_eq!(program(init, "--nonsense prog"), None);
        }
    }

    #[test]
    fn tini_reads_its_options_as_getopt_does() {
        let tini = Init::Tini;
        assert_eq!(program(tini, "-s -g -- prog"), Some(3));
        assert_eq!(program(tini, "-sgvvv prog -a"), None, "-a is not tini's");
        assert_eq!(program(tini, "-sgvvv prog -- -a"), Some(1));
        assert_eq!(program(tini, "-p SIGKILL prog"), Some(2));
        assert_eq!(program(tini, "-pSIGKILL prog"), Some(1));
        assert_eq!(program(tini, "-sp SIGTERM -e 143 -- prog"), Some(5));
        assert_eq!(program(tini, "-R A prog"), Some(2));
        assert_eq!(program(tini, "-p"), None, "an argument missing");
        assert_eq!(program(tini, "-e 1"), None, "only an option");
        assert_eq!(program(tini, "prog -p SIGKILL"), Some(0));
        assert_eq!(
            program(tini, "prog -l"),
            None,
            "the license, after the program"
        );
        assert_eq!(program(tini, "--version"), None);
        assert_eq!(program(tini, "--version prog"), None);
        // docker run --init's entry, and with Docker's own options.
        assert_eq!(program(tini, "-- /bin/probe loop /data/x 100"), Some(1));
    }

    #[test]
    fn catatonit_pauses_or_runs_the_first_operand() {
        let catatonit = Init::Catatonit;
        assert_eq!(program(catatonit, "-g prog"), Some(1));
        assert_eq!(program(catatonit, "-g -- prog -P"), Some(2));
        assert_eq!(program(catatonit, "-P"), None, "pause mode runs nothing");
        assert_eq!(program(catatonit, "-gP prog"), None);
        assert_eq!(
            program(catatonit, "prog -P"),
            None,
            "-P after the program too"
        );
        assert_eq!(program(catatonit, "--version prog"), None);
        assert_eq!(
            program(catatonit, "--vers prog"),
            None,
            "a prefix of --version"
        );
        assert_eq!(program(catatonit, "-V"), None);
        assert_eq!(program(catatonit, "-p prog"), None, "-p is tini's");
    }

    #[test]
    fn dumb_init_stops_at_its_program() {
        let dumb = Init::Dumb;
        assert_eq!(program(dumb, "prog -h"), Some(0), "-h is the program's");
        assert_eq!(program(dumb, "-c -v prog --version"), Some(2));
        assert_eq!(program(dumb, "-r 15:2 prog"), Some(2));
        assert_eq!(program(dumb, "-r15:2 prog"), Some(1));
        assert_eq!(program(dumb, "--rewrite 15:2 --single-child prog"), Some(3));
        assert_eq!(program(dumb, "--rewrite=15:2 prog"), Some(1));
        assert_eq!(program(dumb, "--single prog"), Some(1), "a unique prefix");
        assert_eq!(program(dumb, "--ver prog"), None, "verbose or version");
        assert_eq!(program(dumb, "--verb prog"), Some(1));
        assert_eq!(
            program(dumb, "--verbose=1 prog"),
            None,
            "a flag given a value"
        );
        assert_eq!(program(dumb, "--version"), None);
        assert_eq!(program(dumb, "--rewrite"), None, "an argument missing");
        assert_eq!(program(dumb, "-V prog"), None);
    }

    #[test]
    fn a_user_switcher_runs_what_follows_its_user() {
        for switch in ["gosu", "su-exec"] {
            let switch = Init::named(switch.as_bytes()).unwrap();
            assert_eq!(program(switch, "postgres postgres -D /data"), Some(1));
            assert_eq!(
                program(
                    switch,
                    "999:999 /usr/local/bin/docker-entrypoint.sh postgres"
                ),
                Some(1)
            );
            assert_eq!(
                program(switch, "mysql -- mariadbd"),
                Some(1),
                "-- is its program"
            );
            assert_eq!(program(switch, "postgres"), None, "no program");
            assert_eq!(program(switch, ""), None, "no arguments");
            for asked in ["--help", "-h", "-?", "--version", "-v"] {
                assert_eq!(program(switch, &format!("{asked} prog")), None, "{asked}");
            }
        }
    }
}
