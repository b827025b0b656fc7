// The job's `services:`, recreated under the runtime. The runner creates
// and starts them before any step (so nothing a step installs reaches
// them), each with its label (a bare hexadecimal key), on the job's
// network (github_network_<hex>) under its alias, with host ports
// published before any step. Each one found is recreated as it was made
// (container.js: the same image, name, network and aliases, the host
// ports the runner published, environment, volumes and options) under
// the runtime, once Docker has created the copy and it matches the
// original field for field; the original is stopped (cleanly) and kept
// under another name for the runner's own clean-up, the copy takes its
// name and starts, and is waited for until healthy. A service that cannot
// be copied stays as it was, with one warning saying why. Post removes
// the copies, so that the runner's removal of the job's network works.
//
// Run alone (what tests do), with DOCKER_HOST honoured:
//   node action/services.js recreate RUNTIME   prints what it did as JSON
//   node action/services.js remove JSON        JSON: what recreate printed
'use strict';

const { spawnSync } = require('child_process');
const crypto = require('crypto');
const container = require('./container.js');
const { asRoot, cell, oneLine } = require('./common.js');

const { Unreadable } = container;

// How long a copy may take to become healthy before it is given up.
const HEALTHY_WITHIN_MS = 300000;
// How long a service gets to stop cleanly (a database's shutdown).
const STOP_SECONDS = '30';

// `docker ARGS` as root (through `sudo -n` when not root, with only the
// daemon's variables of the job's environment: common.js asRoot): its
// status and output.
function docker(args) {
  const command = asRoot(['docker', ...args]);
  const result = spawnSync(command[0], command.slice(1), {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    timeout: 120000,
  });
  if (result.error) throw result.error;
  return result;
}

// `docker ARGS` that must succeed: its stdout, trimmed.
function ok(args) {
  const result = docker(args);
  if (result.status !== 0) {
    const said = (result.stderr || '').trim().split('\n').pop();
    throw new Error(`docker ${args[0]} ${args[1] || ''}: ${said}`);
  }
  return result.stdout.trim();
}

function inspect(ids, kind = 'container') {
  if (ids.length === 0) return [];
  const text = ok([kind, 'inspect', ...ids]);
  try {
    return JSON.parse(text);
  } catch {
    throw new Unreadable(`docker ${kind} inspect gave no JSON`);
  }
}

// The job's service containers, as the runner made them: running, with a
// label whose key is bare hexadecimal and whose value is empty, on one
// github_network_<hex> network with an alias there. The job container
// has the same label and network but no alias. Where services of more
// than one job run on this Docker (a self-hosted host whose runners
// share one daemon: each runner's label is its own, each job's network
// too), this job's cannot be told from another's: none is touched, and
// Unreadable says why, rather than stop and later remove another job's.
function find() {
  const ids = ok(['ps', '--no-trunc', '--quiet', '--filter', 'status=running']).split('\n').filter(Boolean);
  const found = [];
  for (const id of ids) {
    let info;
    try {
      [info] = inspect([id]);
    } catch (error) {
      // Gone meanwhile, or unreadable: not a service we can tell.
      continue;
    }
    if (container.serviceOf(info)) found.push(info);
  }
  const jobs = new Set(found.map((info) => {
    const service = container.serviceOf(info);
    return `${service.label} on ${service.network}`;
  }));
  if (jobs.size > 1) {
    throw new Unreadable(
      `services of ${jobs.size} jobs run on this Docker (runner label and network: ${[...jobs].sort().join(', ')}), ` +
        "and this job's cannot be told from another's: none was recreated. On a host whose runners share " +
        'one Docker, register the runtime before the jobs instead (docs/ci.md)',
    );
  }
  return found;
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

// The TCP ports a running container listens on (state 0A in its network
// namespace's /proc/PID/net/tcp and tcp6), read as root: a Set, or null
// where that cannot be told (a daemon on another machine, whose pids
// mean nothing here).
function listeningPorts(pid) {
  const host = process.env.DOCKER_HOST || '';
  if (!pid || (host !== '' && !host.startsWith('unix://')) || process.env.DOCKER_CONTEXT) return null;
  const ports = new Set();
  for (const file of ['tcp', 'tcp6']) {
    const command = asRoot(['cat', `/proc/${pid}/net/${file}`]);
    const result = spawnSync(command[0], command.slice(1), { encoding: 'utf8', timeout: 10000 });
    if (result.error || result.status !== 0) {
      if (file === 'tcp') return null;
      continue;
    }
    for (const line of result.stdout.split('\n')) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '0A') ports.add(parseInt(fields[1].split(':').pop(), 16));
    }
  }
  return ports;
}

// The ports a service without a health check is ready on: those it
// exposes that the original listened on when it was found.
function readyPorts(original) {
  if (original.State.Health) return [];
  const listening = listeningPorts(original.State.Pid);
  if (!listening) return [];
  return Object.keys(original.Config.ExposedPorts || {})
    .filter((port) => port.endsWith('/tcp'))
    .map((port) => parseInt(port, 10))
    .filter((port) => listening.has(port));
}

// Waits until `id` is healthy; without a health check, until it listens
// on each of `ports` (where the original did). null, or why not.
function healthy(id, within, ports = []) {
  const deadline = Date.now() + within;
  for (;;) {
    const [info] = inspect([id]);
    const state = info.State || {};
    if (!state.Running) return `it stopped (exit ${state.ExitCode})`;
    const health = state.Health ? state.Health.Status : '';
    if (health === 'healthy') return null;
    if (health === '') {
      const listening = ports.length > 0 ? listeningPorts(state.Pid) : null;
      if (!listening || ports.every((port) => listening.has(port))) return null;
    }
    if (health === 'unhealthy') return 'its health check says unhealthy';
    if (Date.now() > deadline) {
      return health ? `not healthy within ${within / 1000} s` : `not listening on ${ports.join(', ')} within ${within / 1000} s`;
    }
    sleep(500);
  }
}

// The end of a container's log, for a warning.
function logTail(id) {
  const result = docker(['logs', '--tail', '5', id]);
  return `${result.stdout || ''}${result.stderr || ''}`.trim().replace(/\s*(\r\n|\r|\n)\s*/g, ' | ');
}

// The last line a failed docker command said.
function lastLine(result) {
  return (result.stderr || '').trim().split('\n').pop();
}

// Starts the created `copy` and waits until healthy (or listening on
// `ports`): null, or why not.
function bringUp(copy, within, ports) {
  const start = docker(['start', copy]);
  const why = start.status === 0 ? healthy(copy, within, ports) : lastLine(start);
  if (!why) return null;
  const said = logTail(copy);
  return said ? `${why} (its log ends: ${said})` : why;
}

// A copy given up: stopped cleanly (a database shuts down), removed.
function discard(copy) {
  docker(['stop', '--time', STOP_SECONDS, copy]);
  docker(['rm', '--force', copy]);
}

// The copy under the runtime did not come up: the same copy under the
// original's runtime takes its place, on the same host ports (the
// original started again would get new ones for those the runner left
// to Docker, which `job.services` already told the steps); failing that,
// the original itself, saying if its ports moved.
function fallBack(original, name, args, why, within, ports) {
  const runtime = original.HostConfig.Runtime || 'runc';
  let copy;
  try {
    copy = ok(['create', '--name', name, '--runtime', runtime, ...args]);
    const still = bringUp(copy, within, ports);
    if (still) throw new Error(still);
    const [info] = inspect([copy]);
    return { id: copy, ports: container.hostPorts(info), left: `${why}; a copy under ${runtime} took its place` };
  } catch (error) {
    if (copy) discard(copy);
  }
  docker(['rename', original.Id, name]);
  let again = 'could not be started again';
  if (docker(['start', original.Id]).status === 0) {
    const was = container.hostPorts(original);
    const ports = container.hostPorts(inspect([original.Id])[0]);
    const moved = Object.keys(ports).filter((port) => ports[port] !== was[port]);
    again = 'started again';
    if (moved.length > 0) again += `, ${moved.map((port) => `${port} now on host port ${ports[port]}`).join(', ')}`;
  }
  return { left: `${why}; the original ${again}` };
}

// The copy of `original` under `runtime`, created and checked field for
// field: {copy, args}; throws Unreadable for what cannot be copied.
function copyOf(original, runtime, name) {
  const [image] = inspect([original.Image], 'image');
  const args = container.createArgs(original, image);
  const copy = ok(['create', '--name', `${name}-eatmydata`, '--runtime', runtime, ...args]);
  const [made] = inspect([copy]);
  const differs = container.differences(original, made, runtime);
  if (differs.length > 0) {
    docker(['rm', '--force', copy]);
    throw new Unreadable(`its copy would differ in ${differs.join(', ')}`);
  }
  return { copy, args };
}

// One service recreated under `runtime`, or left as it was: what was done.
function recreateOne(original, runtime, within) {
  const service = container.serviceOf(original);
  const name = original.Name.replace(/^\//, '');
  const done = { name, alias: service.alias, image: original.Config.Image, original: original.Id };
  const started = Date.now();
  if (original.HostConfig.Runtime === runtime) return { ...done, already: true };
  let copy, args;
  try {
    ({ copy, args } = copyOf(original, runtime, name));
  } catch (error) {
    return { ...done, left: error.message };
  }
  // From here the original is stopped, and kept for the runner to remove.
  const kept = `${name}-before-eatmydata`;
  const ports = readyPorts(original);
  let why;
  try {
    ok(['stop', '--time', STOP_SECONDS, original.Id]);
    ok(['rename', original.Id, kept]);
    ok(['rename', copy, name]);
    why = bringUp(copy, within, ports);
  } catch (error) {
    why = error.message;
  }
  if (why) {
    discard(copy);
    const gaveUp = `its copy under ${runtime} did not come up: ${why}`;
    return { ...done, kept, ...fallBack(original, name, args, gaveUp, within, ports) };
  }
  const [info] = inspect([copy]);
  return {
    ...done,
    id: copy,
    kept,
    ports: container.hostPorts(info),
    seconds: Number(((Date.now() - started) / 1000).toFixed(1)),
  };
}

// Every service found, recreated under `runtime` or left: what was done.
function recreate(runtime, within = HEALTHY_WITHIN_MS) {
  return find().map((original) => recreateOne(original, runtime, within));
}

// The copies (under the runtime, or the fallback under runc) stopped (so
// that the runtime counts their runs) and removed, their logs shown
// first as the runner shows its services' logs. What cannot be removed
// is said, never fatal.
function remove(done) {
  const said = [];
  const copies = done.filter((service) => service.id);
  if (copies.length === 0) return said;
  for (const service of copies) {
    const logs = docker(['logs', '--details', service.id]);
    // A service's log is its own text: no line of it is taken for a
    // workflow command (::stop-commands:: until the token comes back).
    const token = crypto.randomBytes(16).toString('hex');
    said.push(oneLine(`::group::eatmydata: the logs of service ${service.alias} (${service.name}), recreated`));
    said.push(`::stop-commands::${token}`);
    said.push(`${logs.stdout || ''}${logs.stderr || ''}`.trimEnd());
    said.push(`::${token}::`);
    said.push('::endgroup::');
  }
  const ids = copies.map((service) => service.id);
  docker(['stop', '--time', STOP_SECONDS, ...ids]);
  const removed = docker(['rm', '--force', ...ids]);
  if (removed.status !== 0) {
    said.push(`::warning::eatmydata: could not remove the recreated services: ${oneLine((removed.stderr || '').trim())}`);
  }
  return said;
}

// What the job's log says of each: one line, whatever a service's log
// or docker said in why it was left (common.js oneLine).
function lines(done, runtime) {
  return done.map((service) => {
    if (service.already) return `eatmydata: service ${service.alias} (${service.name}) already runs under ${runtime}`;
    if (service.left) {
      return `::warning::eatmydata: service ${service.alias} (${service.name}) not under ${runtime}: ${oneLine(service.left)}`;
    }
    const ports = Object.entries(service.ports)
      .map(([port, host]) => `${port} on ${host}`)
      .join(', ');
    return (
      `eatmydata: service ${service.alias} (${service.image}) recreated under ${runtime}, ready in ${service.seconds} s` +
      (ports ? `: ports ${ports}, as before` : '')
    );
  });
}

// The summary's section: a table of the services, recreated or not.
function markdown(done) {
  if (done.length === 0) return '';
  const rows = done.map((service) => {
    const ports = service.ports ? Object.entries(service.ports).map(([port, host]) => `${port} → ${host}`) : [];
    let how = 'recreated under eatmydata';
    if (service.already) how = 'already under eatmydata';
    if (service.left) how = `not under eatmydata: ${service.left}`;
    return `| ${cell(service.alias)} | \`${cell(service.image)}\` | ${cell(ports.join(', '))} | ${cell(how)} |`;
  });
  return [
    '',
    '### Service containers',
    '',
    '| Service | Image | Ports | |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

module.exports = { Unreadable, find, lines, markdown, recreate, remove };

if (require.main === module) {
  const [verb, argument] = process.argv.slice(2);
  try {
    if (verb === 'recreate' && argument) {
      const done = recreate(argument);
      for (const line of lines(done, argument)) process.stderr.write(`${line}\n`);
      process.stdout.write(`${JSON.stringify(done)}\n`);
    } else if (verb === 'remove' && argument) {
      for (const line of remove(JSON.parse(argument))) process.stderr.write(`${line}\n`);
    } else {
      process.stderr.write('eatmydata: services.js recreate RUNTIME | remove JSON\n');
      process.exitCode = 2;
    }
  } catch (error) {
    process.stderr.write(`eatmydata: ${error.message}\n`);
    process.exitCode = 1;
  }
}
