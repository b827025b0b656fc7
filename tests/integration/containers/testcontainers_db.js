// The Testcontainers recipe of docs/containers.md for Node, run by the
// container tests with the PostgreSQL and MariaDB modules as their users
// call them.
//
// usage: node testcontainers_db.js postgres|mariadb IMAGE DATA ROWS recipe|plain
// Starts IMAGE with the module, its data folder bound from DATA, with the
// recipe unless "plain" (the profile, eatmydata-docker.json, in the working
// folder); makes ROWS inserts, each its own transaction, with the server's
// own client in the container; prints "rows|sum" of the table, and on
// stderr the way the container was created ("way: runtime|profile|plain",
// from the daemon's record). Needs DOCKER_HOST,
// TESTCONTAINERS_RYUK_DISABLED=true and NODE_PATH naming the folder npm
// installed testcontainers in.
"use strict";
const { MariaDbContainer } = require("@testcontainers/mariadb");
const { PostgreSqlContainer } = require("@testcontainers/postgresql");

// The recipe, as docs/containers.md shows it.
const fs = require("node:fs");
const { getContainerRuntimeClient } = require("testcontainers");

// Eats the container's syncs: eatmydata's runtime where the daemon has
// it, else eatmydata's seccomp profile, whose JSON text (not a path) the
// Docker API takes.
async function withEatmydata(container) {
  const { info } = await getContainerRuntimeClient();
  if (info.containerRuntime.runtimes.includes("eatmydata")) {
    // No method names a runtime; hostConfig is what the create call sends.
    container.hostConfig.Runtime = "eatmydata";
    return container;
  }
  const profile = fs.readFileSync("eatmydata-docker.json", "utf8");
  return container.withSecurityOpt(`seccomp=${profile}`);
}
// The end of the recipe.

const SERVERS = {
  // module, data folder, client command (the user and database the
  // modules make: test/test)
  postgres: [
    PostgreSqlContainer,
    "/var/lib/postgresql/data",
    "psql -X -q -A -t -v ON_ERROR_STOP=1 -U test -d test",
  ],
  mariadb: [MariaDbContainer, "/var/lib/mysql", "mariadb -N -B -utest -ptest test"],
};

// How the daemon made the container: under eatmydata's runtime, with a
// seccomp profile of the client's, or plainly.
async function way(started) {
  const client = await getContainerRuntimeClient();
  const inspected = await client.container.inspect(client.container.getById(started.getId()));
  const host = inspected.HostConfig;
  if (host.Runtime === "eatmydata") return "runtime";
  if ((host.SecurityOpt ?? []).some((opt) => opt.startsWith("seccomp="))) return "profile";
  return "plain";
}

async function main() {
  const [kind, image, data, rows, how] = process.argv.slice(2);
  const [Module, folder, client] = SERVERS[kind];
  let container = new Module(image).withBindMounts([{ source: data, target: folder }]);
  if (how === "recipe") container = await withEatmydata(container);
  const server = await container.start();
  try {
    console.error(`way: ${await way(server)}`);
    const inserts = `i=0; while [ "$i" -lt ${Number(rows)} ]; do echo "insert into t values($i);"; i=$((i+1)); done`;
    const script =
      `echo 'create table t (x int primary key);' | ${client} && ` +
      `${inserts} | ${client} && ` +
      `echo "select concat(count(*), '|', sum(x)) from t;" | ${client}`;
    const { output, exitCode } = await server.exec(["sh", "-c", script]);
    process.stdout.write(output);
    return exitCode;
  } finally {
    await server.stop();
  }
}

main().then(
  (status) => process.exit(status),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
