//! Testcontainers in the reach test: PyPI's and npm's, as
//! scripts/setup-test-deps installs them, running the recipes of
//! docs/containers.md (the drivers `testcontainers_db.py` and `.js`), and
//! the check that the page shows those recipes as the drivers run them.

use std::fs;
use std::path::Path;
use std::process::Command;

use super::super::engine::Measured;
use super::{MARIADB, POSTGRES, Private, ROWS, measure};
use crate::loopfs::LoopFs;

/// Where `scripts/setup-test-deps` installs PyPI's and npm's testcontainers.
const VENV: &str = "/var/tmp/eatmydata-venv";
const NODE_MODULES: &str = "/var/tmp/eatmydata-node-testcontainers/node_modules";

/// A Testcontainers client, with the driver that runs its recipe.
#[derive(Clone, Copy, Debug)]
pub(super) enum Client {
    Python,
    Node,
}

impl Client {
    fn command(self, private: &Private) -> Command {
        let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/containers");
        match self {
            Client::Python => {
                let mut command = private.client(Path::new(VENV).join("bin/python"));
                command.arg(here.join("testcontainers_db.py"));
                command
            }
            Client::Node => {
                let mut command = private.client("node");
                command
                    .arg(here.join("testcontainers_db.js"))
                    .env("NODE_PATH", NODE_MODULES);
                command
            }
        }
    }
}

/// A Testcontainers run: `client`'s driver with `kind`'s module, `how`
/// being "recipe" or "plain".
pub(super) fn testcontainers(
    private: &Private,
    disk: &LoopFs,
    client: Client,
    kind: &str,
    how: &str,
) -> Measured {
    let image = match kind {
        "postgres" => POSTGRES,
        _ => MARIADB,
    };
    measure(disk, &format!("{client:?}-{kind}-{how}"), |data| {
        client
            .command(private)
            .args([kind, image])
            .arg(data)
            .args([&ROWS.to_string(), how])
            .output()
            .expect("run the Testcontainers driver")
            .into()
    })
}

/// The lines of `file` between the line `start` and the line `end`.
fn between(file: &Path, start: &str, end: &str) -> String {
    let text = fs::read_to_string(file).expect("read a driver");
    let lines: Vec<&str> = text.lines().collect();
    let from = lines
        .iter()
        .position(|line| *line == start)
        .expect("the recipe's start");
    let to = lines
        .iter()
        .position(|line| *line == end)
        .expect("the recipe's end");
    lines[from + 1..to].join("\n").trim().to_owned()
}

#[test]
fn the_docs_show_the_testcontainers_recipes_the_tests_run() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/containers");
    let docs = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/containers.md"))
        .expect("read docs/containers.md");
    for (driver, start, end) in [
        (
            "testcontainers_db.py",
            "# The recipe, as docs/containers.md shows it.",
            "# The end of the recipe.",
        ),
        (
            "testcontainers_db.js",
            "// The recipe, as docs/containers.md shows it.",
            "// The end of the recipe.",
        ),
    ] {
        let recipe = between(&here.join(driver), start, end);
        assert!(
            recipe.len() > 200,
            "{driver}: no recipe between its markers"
        );
        assert!(
            docs.contains(&recipe),
            "docs/containers.md does not show {driver}'s recipe:\n{recipe}"
        );
    }
}
