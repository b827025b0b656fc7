// What main checks before it changes anything: each input, and that the
// runner can do what they ask. The first failure is thrown as Refused,
// which main shows as a single `::error::` line saying what to do.
'use strict';

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { Refused, asRoot, enabled, input, isRoot, reason, succeeds } = require('./common.js');

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

// The dockerd the pid file names, or docker.service's: its pid, or null.
function dockerdPid(file) {
  const isDockerd = (pid) => {
    try {
      return /^[1-9][0-9]*$/.test(pid) && fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'dockerd';
    } catch {
      return false;
    }
  };
  let pid = '';
  try {
    pid = fs.readFileSync(file, 'utf8').trim();
  } catch {
    // No pid file: docker.service's, below.
  }
  if (isDockerd(pid)) return pid;
  const shown = spawnSync('systemctl', ['show', '--property', 'MainPID', '--value', 'docker'], {
    encoding: 'utf8',
    timeout: 30000,
  });
  const main = (shown.stdout || '').trim();
  return isDockerd(main) ? main : null;
}

// The daemon.json the dockerd of `pid` reads: its --config-file (from its
// own folder when relative), else Docker's default; resolved, or as given
// where it cannot be.
function readsConfig(pid) {
  let args = [];
  try {
    args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return null;
  }
  let named = '/etc/docker/daemon.json';
  args.forEach((arg, i) => {
    if (arg === '--config-file' && i + 1 < args.length) named = args[i + 1];
    else if (arg.startsWith('--config-file=')) named = arg.slice('--config-file='.length);
  });
  if (!path.isAbsolute(named)) {
    try {
      named = path.join(fs.readlinkSync(`/proc/${pid}/cwd`), named);
    } catch {
      return null;
    }
  }
  return resolved(named);
}

// `file` with its links resolved (its folder's, when it does not exist).
function resolved(file) {
  try {
    return fs.realpathSync(file);
  } catch {
    try {
      return path.join(fs.realpathSync(path.dirname(file)), path.basename(file));
    } catch {
      return path.resolve(file);
    }
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
  const pid = dockerdPid(file);
  if (pid === null && !systemdDocker()) {
    throw new Refused(
      `no dockerd to reload: ${file} names none and docker.service is not active: ` +
        'give its pid file as `docker-pidfile`, or set `docker: false`',
    );
  }
  const reads = pid === null ? null : readsConfig(pid);
  if (reads !== null && reads !== resolved(given.dockerConfig)) {
    throw new Refused(
      `the running dockerd (pid ${pid}) reads ${reads}, not docker-config ${given.dockerConfig}: ` +
        `give \`docker-config: ${reads}\`, or leave it unset for Docker's default`,
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

// The command to install, before anything is installed: it says it is
// eatmydata, and (for Docker) a dry run of the registration, as root as
// the step will be, finds daemon.json one it can edit. Its stdout is
// shown only when it refuses.
function command(file, given) {
  const version = spawnSync(file, ['--version'], { encoding: 'utf8', timeout: 30000 });
  const first = (version.stdout || '').split('\n')[0];
  if (version.status !== 0 || !/^eatmydata [0-9]/.test(first)) {
    const said = version.error ? version.error.code : `its --version says '${first.slice(0, 80)}'`;
    throw new Refused(
      `${file} is not the eatmydata command (${said}): give the built single file (target/release/eatmydata, ` +
        'scripts/build-static) as `path`, or leave path empty for the release file',
    );
  }
  if (!given.docker) return;
  let dry = [file, '--runtime', 'configure', 'docker', '--default', '--dry-run', '--config', given.dockerConfig];
  dry.push('--pid-file', pidfile(given.dockerConfig, given.dockerPidfile));
  if (given.systemdDir) dry.push('--systemd-dir', given.systemdDir);
  dry = asRoot(dry);
  const tried = spawnSync(dry[0], dry.slice(1), { encoding: 'utf8', timeout: 60000 });
  if (tried.status !== 0) {
    throw new Refused(`${reason(tried.stderr || tried.stdout)}; nothing was installed or changed`);
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

module.exports = { all, command, inputs, pidfile };
