// What the Action's main and post steps share: inputs and state as the
// runner gives them (INPUT_<NAME> and STATE_<name> variables, the
// GITHUB_STATE file), and the shell steps in this folder, run as root.
// No npm dependency: node's own modules only.
'use strict';

const { spawnSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
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

// Runs action/SCRIPT with ARGS as root (through `sudo -n` when not root;
// as the runner's user when `user`), its stderr to the job's log; returns
// its stdout, which is also shown unless `capture`.
function step(script, args, { capture = false, user = false, env = {} } = {}) {
  let command = ['sh', path.join(here, script), ...args];
  if (!user && !isRoot()) command = ['sudo', '-n', '-E', ...command];
  const result = spawnSync(command[0], command.slice(1), {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  if (result.error) throw result.error;
  if (!capture && result.stdout) process.stdout.write(result.stdout);
  if (result.status !== 0) {
    throw new Error(`action/${script} failed (exit ${result.status}); its reason is above`);
  }
  return result.stdout;
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

// The one line the runner shows as the step's error.
function fail(error) {
  const message = String(error && error.message ? error.message : error).replace(/[\r\n]+/g, ' ');
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

// Where main keeps what post needs beyond short values (the files as
// they were): the job's temporary folder, which the runner empties.
function keepDir() {
  const dir = path.join(process.env.RUNNER_TEMP || '/tmp', 'eatmydata-action');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

module.exports = {
  Refused,
  enabled,
  fail,
  fingerprint,
  here,
  input,
  isRoot,
  keepDir,
  saveState,
  state,
  step,
  succeeds,
};
