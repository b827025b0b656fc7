// What main checks before it changes anything: each input, and that the
// runner can do what they ask. The first failure is thrown as Refused,
// which main shows as a single `::error::` line saying what to do.
'use strict';

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { Refused, asRoot, enabled, input, isRoot, succeeds } = require('./common.js');

// The inputs, read and checked once.
function inputs() {
  return {
    path: input('path', ''),
    prefix: input('prefix', '/usr/local'),
    docker: enabled('docker', 'true'),
    builds: enabled('builds', 'false'),
    services: enabled('services', 'true'),
    apt: enabled('apt', 'true'),
    summary: enabled('summary', 'true'),
    keep: enabled('keep', 'false'),
    dockerConfig: input('docker-config', '/etc/docker/daemon.json'),
    dockerPidfile: input('docker-pidfile', ''),
    systemdDir: input('systemd-dir', ''),
    releaseUrl: input('release-url', ''),
  };
}

// Root, or passwordless sudo: every step after this one needs it.
function root() {
  if (isRoot()) return;
  const uid = process.getuid();
  if (!succeeds('sudo', ['-n', 'true'])) {
    throw new Refused(
      `this job runs as uid ${uid}, not root, and has no passwordless sudo: ` +
        'run the job as root, or give its user passwordless sudo (GitHub-hosted runners have it)',
    );
  }
}

// The prefix must be root's: every folder from / owned by root and
// writable by no one else (the rule the command applies to where root
// takes its library and runtime from), so that what root runs from it no
// other user can replace. Folders not made yet are made by root.
function prefix(value) {
  if (!path.isAbsolute(value)) {
    throw new Refused(`prefix '${value}' is not an absolute path: give one such as /usr/local`);
  }
  let current = '/';
  for (const part of path.normalize(value).split('/').filter(Boolean)) {
    current = path.join(current, part);
    let stat;
    try {
      stat = fs.lstatSync(current);
    } catch (error) {
      if (error.code === 'ENOENT') return;
      throw error;
    }
    let why = '';
    if (stat.isSymbolicLink()) why = 'is a symbolic link';
    else if (!stat.isDirectory()) why = 'is not a folder';
    else if (stat.uid !== 0) why = `is owned by uid ${stat.uid}`;
    else if (stat.mode & 0o022) why = `is writable by others (mode ${(stat.mode & 0o7777).toString(8)})`;
    if (why) {
      throw new Refused(
        `prefix ${value} is not root's: ${current} ${why}, so another user could replace what root runs ` +
          'from it: give a prefix in folders root alone can change, such as /usr/local',
      );
    }
  }
}

// dockerd's pid file: the input, daemon.json's "pidfile", or Docker's own.
function pidfile(config, given) {
  if (given) return given;
  try {
    const json = JSON.parse(fs.readFileSync(config, 'utf8'));
    if (typeof json.pidfile === 'string' && json.pidfile) return json.pidfile;
  } catch {
    // No file or not JSON: configure says so in its own words.
  }
  return '/var/run/docker.pid';
}

// Whether the process the pid file names is a dockerd.
function dockerdAt(file) {
  try {
    const pid = fs.readFileSync(file, 'utf8').trim();
    return /^[0-9]+$/.test(pid) && fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'dockerd';
  } catch {
    return false;
  }
}

function systemdDocker() {
  return succeeds('systemctl', ['is-active', '--quiet', 'docker']);
}

// A Docker to register with: the client, a daemon that answers, and a
// dockerd to reload (through its pid file, or docker.service).
function docker(given) {
  const found = (process.env.PATH || '')
    .split(':')
    .some((dir) => dir !== '' && fs.statSync(path.join(dir, 'docker'), { throwIfNoEntry: false })?.isFile());
  if (!found) {
    throw new Refused('no docker on this runner: set `docker: false` in the step\'s `with:` (apt still runs under eatmydata)');
  }
  // As the steps run it: root's, through sudo when not root.
  const version = ['docker', 'version', '--format', '{{.Server.Version}}'];
  const command = asRoot(version);
  const client = spawnSync(command[0], command.slice(1), { encoding: 'utf8', timeout: 30000 });
  if (client.status !== 0) {
    const said = (client.stderr || '').trim().split('\n').pop();
    throw new Refused(`Docker's daemon does not answer (${said}): start it before this step, or set \`docker: false\``);
  }
  const file = pidfile(given.dockerConfig, given.dockerPidfile);
  if (!dockerdAt(file) && !systemdDocker()) {
    throw new Refused(
      `no dockerd to reload: ${file} names none and docker.service is not active: ` +
        'give its pid file as `docker-pidfile`, or set `docker: false`',
    );
  }
  if (given.builds && !systemdDocker()) {
    throw new Refused(
      '`builds: true` restarts docker.service, and there is none active here: set `builds: false` ' +
        '(containers still run under eatmydata; BuildKit takes the runtime at dockerd\'s next start)',
    );
  }
}

// The dpkg link may take the place of nothing but its own.
function apt(given) {
  const link = '/usr/local/bin/dpkg';
  let stat;
  try {
    stat = fs.lstatSync(link);
  } catch {
    return;
  }
  const ours = path.join(given.prefix, 'bin', 'eatmydata');
  if (!stat.isSymbolicLink() || fs.readlinkSync(link) !== ours) {
    throw new Refused(`${link} exists and is not this action's link to ${ours}: remove it, or set \`apt: false\``);
  }
}

// Every check, in order; returns the inputs.
function all() {
  const given = inputs();
  root();
  prefix(given.prefix);
  if (given.path !== '' && !fs.statSync(given.path, { throwIfNoEntry: false })?.isFile()) {
    throw new Refused(`path ${given.path} is not a file: give the built eatmydata command, or leave path empty`);
  }
  if (given.docker) docker(given);
  if (given.apt) apt(given);
  return given;
}

module.exports = { all, inputs, pidfile };
