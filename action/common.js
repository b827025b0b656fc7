// What the Action's main and post steps share: inputs and state as the
// runner gives them (INPUT_<NAME> and STATE_<name> variables, the
// GITHUB_STATE file), and the shell steps in this folder, run as root.
// No npm dependency: node's own modules only.
'use strict';

const { spawnSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');

const here = __dirname;

// A value given by the workflow that cannot be used: said in one
// `::error::` line, and nothing changed.
class Refused extends Error {}

// An input, as the runner names it: INPUT_ and the name in capitals,
// its defaults written in action.yml (the runner sets each one).
function input(name, fallback) {
  const value = process.env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`];
  if (value === undefined || value.trim() === '') return fallback;
  const trimmed = value.trim();
  // A control character (a newline above all) would end a line of the
  // GITHUB_STATE file or of a file written from it, or a workflow
  // command: no input needs one.
  if (/[\x00-\x1f\x7f]/.test(trimmed)) {
    throw new Refused(`input '${name}' holds a control character (a newline?): give it on one line`);
  }
  return trimmed;
}

// A true/false input; anything else is refused rather than guessed.
function enabled(name, fallback) {
  const value = input(name, fallback);
  if (value !== 'true' && value !== 'false') {
    throw new Refused(`input '${name}' is '${value}': give true or false`);
  }
  return value === 'true';
}

// Keeps a value for the post step (STATE_<name> there). Written in the
// runner's multi-line form, with a delimiter the value cannot hold, and
// kept in this process too: @github/local-action runs main and post in
// one process, without the file.
function saveState(name, value) {
  const text = String(value);
  process.env[`STATE_${name}`] = text;
  const file = process.env.GITHUB_STATE;
  if (!file) return;
  let delimiter;
  do delimiter = `eatmydata_${crypto.randomBytes(12).toString('hex')}`;
  while (text.includes(delimiter));
  fs.appendFileSync(file, `${name}<<${delimiter}\n${text}\n${delimiter}\n`);
}

function state(name) {
  return process.env[`STATE_${name}`] || '';
}

function isRoot() {
  return process.getuid() === 0;
}

// What root's steps are given of the job's environment through sudo: a
// PATH of the system's own folders (the job's may name folders its user
// writes), and the variables that name the Docker daemon to talk to;
// nothing else (sudo -E handed root the job's whole environment).
const ROOT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const PASSED_TO_ROOT = ['DOCKER_HOST', 'DOCKER_TLS_VERIFY', 'DOCKER_CERT_PATH'];

// `env -i` and the assignments root's step gets: the above, and `env`.
function rootEnvironment(env) {
  const given = PASSED_TO_ROOT.filter((name) => process.env[name] !== undefined).map(
    (name) => `${name}=${process.env[name]}`,
  );
  const own = Object.entries(env).map(([name, value]) => `${name}=${value}`);
  return ['env', '-i', `PATH=${ROOT_PATH}`, ...given, ...own];
}

// `command` (a program and its arguments) as root runs it: itself when
// root, else through `sudo -n` with only what rootEnvironment passes.
function asRoot(command, env = {}) {
  return isRoot() ? command : ['sudo', '-n', ...rootEnvironment(env), ...command];
}

// Runs action/SCRIPT with ARGS as root (through `sudo -n` when not root,
// with only what rootEnvironment passes; as the runner's user when
// `user`), its stderr to the job's log; returns its stdout, which is also
// shown unless `capture`. A failure throws with the step's own last
// `eatmydata:` line (or its last line) as the reason, so that the job's
// error line says why, not only the log above it.
function step(script, args, { capture = false, user = false, env = {} } = {}) {
  let command = ['sh', path.join(here, script), ...args];
  if (!user) command = asRoot(command, env);
  const result = spawnSync(command[0], command.slice(1), {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  if (result.stderr) process.stderr.write(result.stderr);
  if (!capture && result.stdout) process.stdout.write(result.stdout);
  if (result.status !== 0) {
    throw new Error(`action/${script} failed (exit ${result.status}): ${reason(result.stderr)}`);
  }
  return result.stdout;
}

// The line of a step's stderr that says why it failed: its last
// `eatmydata:` line, else its last line.
function reason(stderr) {
  const lines = (stderr || '').split('\n').map((line) => line.trim()).filter(Boolean);
  const ours = lines.filter((line) => line.startsWith('eatmydata:'));
  const line = ours.length ? ours[ours.length - 1] : lines[lines.length - 1];
  return line ? line.replace(/^eatmydata: /, '') : 'it said nothing on stderr';
}

// Runs a program and says whether it exited 0 (nothing shown).
function succeeds(program, args, env) {
  const result = spawnSync(program, args, {
    stdio: 'ignore',
    env: { ...process.env, ...(env || {}) },
    timeout: 30000,
  });
  return !result.error && result.status === 0;
}

// Characters that make a line read otherwise than it is, or split it:
// C0 and C1 controls, bidirectional controls, zero-width and invisible
// ones (as the runtime's report keeps out of its own: account/shown.rs).
const UNSHOWN = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;

// Text from elsewhere (a service's log, docker's stderr) inside a line
// this step writes. The runner reads a step's output a line at a time,
// and a line ends at a CR as well as at an LF (.NET's ReadLine): a bare CR
// in a container's log would start a line of its own, which the runner
// takes for a workflow command when it begins with `::`. So each CR and
// LF, and the % that escapes them, are written as the runner unescapes
// them in a command's message (%0D, %0A, %25), and every other character
// of UNSHOWN is a '?': one line, reading as it is, whatever it holds.
function oneLine(text) {
  const escaped = String(text).replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
  return escaped.replace(UNSHOWN, '?');
}

// `text` for one cell of the summary's Markdown table: each such
// character a '?', and '|' escaped so that it cannot end the cell.
function cell(text) {
  return String(text).replace(UNSHOWN, '?').replace(/\|/g, '\\|');
}

// The one line the runner shows as the step's error.
function fail(error) {
  const message = oneLine(String(error && error.message ? error.message : error).replace(/\s*[\r\n]+\s*/g, ' '));
  process.stdout.write(`::error::eatmydata: ${message}\n`);
  process.exitCode = 1;
}

// The SHA-256 of a file's bytes, or "absent": post compares what main saw.
function fingerprint(file) {
  try {
    return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  } catch (error) {
    if (error.code === 'ENOENT') return 'absent';
    throw error;
  }
}

// The folder main downloads or builds the command in before install.sh
// copies it as root: one of its own, made fresh (mkdtemp: mode 0700, this
// user's, a name no one chose before), in the job's temporary folder or,
// without RUNNER_TEMP, the system's: a folder of a fixed name there could
// be another local user's, who could swap the file before root copies it.
// Made once per process; `dropWorkDir` takes it away.
let workDirMade = null;
function workDir() {
  if (workDirMade === null) {
    const base = process.env.RUNNER_TEMP || os.tmpdir();
    workDirMade = fs.mkdtempSync(path.join(base, 'eatmydata-action-'));
  }
  return workDirMade;
}

function dropWorkDir() {
  if (workDirMade === null) return;
  fs.rmSync(workDirMade, { recursive: true, force: true });
  workDirMade = null;
}

module.exports = {
  Refused,
  asRoot,
  cell,
  enabled,
  fail,
  fingerprint,
  here,
  input,
  isRoot,
  oneLine,
  workDir,
  dropWorkDir,
  reason,
  saveState,
  state,
  step,
  succeeds,
};
