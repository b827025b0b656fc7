// The Action's main step: check every input and what it needs first (a
// failure is one `::error::` line, and nothing changed); then install the
// command (the release file of this action's ref, checked against the
// hash in this tree; or `path`; or, with no release written here, built
// by cargo), make it Docker's default runtime (reloaded, nothing
// stopped), recreate the job's `services:` under it, put dpkg under it,
// and keep what the post step needs to tell the job's account and take
// it all back.
'use strict';

const fs = require('fs');
const path = require('path');
const checks = require('./checks.js');
const release = require('./release.js');
const services = require('./services.js');
const { Refused, dropWorkDir, fail, fingerprint, here, oneLine, saveState, step, succeeds, workDir } = require('./common.js');


// The command to install: `path`, this ref's release, or cargo's build.
async function command(given) {
  if (given.path !== '') return path.resolve(given.path);
  const written = release.written();
  if (written) return release.download(written, given.releaseUrl, workDir());
  if (!succeeds('cargo', ['--version'])) {
    throw new Refused(
      "this action's ref has no release (no action/release/ in its tree) and this runner has no cargo " +
        'to build one: use a released tag (uses: ...@vX.Y.Z), give a built command as `path`, or set up Rust first',
    );
  }
  process.stdout.write('eatmydata: no release written for this ref: falling back to cargo install (minutes)\n');
  const built = step('build.sh', [path.dirname(here), workDir()], { capture: true, user: true });
  return built.trim().split('\n').pop();
}

// The job's services, started before any step under runc, made again
// under the runtime just registered (services.js). Never fails the step:
// what cannot be done is a warning, and the services stay as they were.
function recreateServices() {
  let done;
  try {
    done = services.recreate('eatmydata');
  } catch (error) {
    process.stdout.write(`::warning::eatmydata: the job's services were left as they were: ${oneLine(error.message)}\n`);
    return;
  }
  saveState('services', JSON.stringify(done));
  for (const line of services.lines(done, 'eatmydata')) process.stdout.write(`${line}\n`);
}

async function run() {
  const started = process.hrtime.bigint();
  try {
    const given = checks.all();
    const file = await command(given);
    checks.command(file, given);
    // Containers deleted from now on are this job's.
    saveState('since', new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
    saveState('prefix', given.prefix);
    saveState('keep', String(given.keep));
    try {
      step('install.sh', [given.prefix, file]);
    } finally {
      dropWorkDir();
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    process.stdout.write(`eatmydata: the command installed ${seconds.toFixed(1)} s after the step started\n`);
    if (given.docker) {
      saveState('docker_config', given.dockerConfig);
      saveState('docker_pidfile', given.dockerPidfile);
      saveState('docker_before', fingerprint(given.dockerConfig));
      saveState('builds', String(given.builds));
      saveState('systemd_dir', given.systemdDir);
      // Before the step: should it fail half-way, post still takes back.
      saveState('docker', 'true');
      const said = step('docker.sh', [
        'apply',
        given.prefix,
        given.dockerConfig,
        given.dockerPidfile,
        String(given.builds),
        given.systemdDir,
      ]);
      const before = /^eatmydata: (\d+) container\(s\) were running before the runtime became Docker's default$/m.exec(said);
      saveState('running_before', before ? before[1] : '0');
      if (given.services) recreateServices();
    }
    if (given.apt) {
      saveState('apt', 'true');
      step('apt.sh', [given.prefix, '']);
    }
  } catch (error) {
    fail(error);
  } finally {
    dropWorkDir();
  }
}

module.exports = { run };

// Run by the runner (node action/main.js); @github/local-action calls run().
if (require.main === module) run();
