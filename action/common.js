// What the Action's main and post steps share: inputs and state as the
// runner gives them (INPUT_<NAME> and STATE_<name> variables, the
// GITHUB_STATE file), and the shell steps in this folder, run as root.
'use strict';

const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const here = __dirname;

// An input, as the runner names it: INPUT_ and the name in capitals.
function input(name, fallback) {
  const value = process.env[`INPUT_${name.toUpperCase()}`];
  return value === undefined || value.trim() === '' ? fallback : value.trim();
}

function enabled(name) {
  return input(name, 'true') === 'true';
}

// Keeps a value for the post step (STATE_<name> there).
function saveState(name, value) {
  const file = process.env.GITHUB_STATE;
  if (file) fs.appendFileSync(file, `${name}=${value}\n`);
}

function state(name) {
  return process.env[`STATE_${name}`] || '';
}

// Runs action/SCRIPT with ARGS as root (through sudo when not root;
// as the runner's user when `user`), its output to the job's log;
// returns its stdout when `capture`.
function step(script, args, capture, user) {
  let command = ['sh', path.join(here, script), ...args];
  if (!user && process.getuid() !== 0) command = ['sudo', '-E', ...command];
  const result = spawnSync(command[0], command.slice(1), {
    stdio: ['ignore', capture ? 'pipe' : 'inherit', 'inherit'],
    encoding: 'utf8',
  });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`action/${script} failed (exit ${result.status})`);
  }
  return result.stdout;
}

function fail(error) {
  // The runner's workflow command for an error annotation.
  process.stdout.write(`::error::eatmydata: ${error.message}\n`);
  process.exitCode = 1;
}

module.exports = { here, input, enabled, saveState, state, step, fail };
