// The command for this action's own ref, from its release: the file for
// the runner's architecture, downloaded and checked against the SHA-256
// that scripts/release wrote into this tree (action/release/) when the
// release was made. A file whose hash differs is refused and deleted;
// nothing is installed from it. A tree with no release written (a branch,
// a commit between releases) has nothing to check a download against:
// the command is then built with `cargo install` (named as the fallback).
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const { Refused, here } = require('./common.js');

const dir = path.join(here, 'release');

// The release file's name for node's architecture.
function fileName(arch) {
  const names = { x64: 'eatmydata-x86_64', arm64: 'eatmydata-aarch64' };
  if (!names[arch]) {
    throw new Refused(`no release file for the ${arch} architecture (x86_64 and aarch64 have one): give a built command as \`path\``);
  }
  return names[arch];
}

// This tree's release: its tag and the SHA-256 of each file, or null.
function written() {
  let version;
  let sums;
  try {
    version = fs.readFileSync(path.join(dir, 'VERSION'), 'utf8').trim();
    sums = fs.readFileSync(path.join(dir, 'SHA256SUMS'), 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT') return null;
    throw error;
  }
  const hashes = {};
  for (const line of sums.split('\n')) {
    const match = /^([0-9a-f]{64}) [ *]([A-Za-z0-9._-]+)$/.exec(line.trim());
    if (match) hashes[match[2]] = match[1];
  }
  return { version, hashes };
}

// Where the release's files are: the input for mirrors and tests, else
// GitHub's download address of the repository the action was taken from.
function baseUrl(given, version) {
  if (given) return `${given.replace(/\/+$/, '')}/${version}`;
  const repository = process.env.GITHUB_ACTION_REPOSITORY;
  if (!repository) {
    throw new Refused('cannot tell which repository this action came from (no GITHUB_ACTION_REPOSITORY): give `release-url` or `path`');
  }
  const server = process.env.GITHUB_SERVER_URL || 'https://github.com';
  return `${server}/${repository}/releases/download/${version}`;
}

// Downloads this tree's release file into `into` and checks it; returns
// its path. Throws Refused on a hash that differs (the file deleted).
async function download(release, given, into) {
  const name = fileName(process.arch);
  const expected = release.hashes[name];
  if (!expected) throw new Refused(`action/release/SHA256SUMS has no ${name}: this tree's release is incomplete; give \`path\``);
  const url = `${baseUrl(given, release.version)}/${name}`;
  const response = await fetch(url, { redirect: 'follow', signal: AbortSignal.timeout(120000) });
  if (!response.ok) throw new Error(`downloading ${url}: HTTP ${response.status}`);
  const bytes = Buffer.from(await response.arrayBuffer());
  const got = crypto.createHash('sha256').update(bytes).digest('hex');
  if (got !== expected) {
    throw new Refused(
      `refused ${url}: its SHA-256 is ${got}, and this action's tree (action/release/SHA256SUMS, ` +
        `written at release ${release.version}) says ${expected}; nothing was installed`,
    );
  }
  const file = path.join(into, name);
  fs.writeFileSync(file, bytes, { mode: 0o755 });
  process.stdout.write(`eatmydata: downloaded ${url}, SHA-256 ${got} as this action's tree says\n`);
  return file;
}

module.exports = { download, fileName, written };
