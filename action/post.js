// The Action's post step: the account of the containers this job's
// Docker ran under the runtime, as a summary on the job's page; then,
// unless `keep: true`, what main did taken back (Docker's default runtime
// by `configure docker --remove` and a reload, the dpkg link and apt's
// setting), which matters on a self-hosted runner, whose next jobs would
// otherwise keep it. The installed command stays (inert on its own).
'use strict';

const fs = require('fs');
const { enabled, fail, fingerprint, state, step } = require('./common.js');


function summary(prefix) {
  const markdown = step(
    'summary.sh',
    [prefix, state('since'), state('docker') || 'false', state('running_before') || '0'],
    { capture: true },
  );
  const file = process.env.GITHUB_STEP_SUMMARY;
  if (file) fs.appendFileSync(file, markdown);
  else process.stdout.write(markdown);
}

function takeBack(prefix) {
  const docker = state('docker') === 'true';
  if (docker) {
    const config = state('docker_config');
    step('docker.sh', ['remove', prefix, config, state('docker_pidfile'), state('builds') || 'false', state('systemd_dir')]);
    if (fingerprint(config) !== state('docker_before')) {
      process.stdout.write(`::warning::eatmydata: ${config} is not as it was before the job: a step changed it too?\n`);
    }
  }
  if (state('apt') === 'true') step('apt.sh', [prefix, '', 'remove']);
}

async function run() {
  try {
    const prefix = state('prefix');
    if (prefix === '') return; // main stopped before it changed anything
    if (enabled('summary', 'true')) summary(prefix);
    const selfHosted = process.env.RUNNER_ENVIRONMENT === 'self-hosted';
    if (state('keep') === 'true') {
      if (state('docker') === 'true') {
        step('docker.sh', ['keep', prefix, state('docker_config'), state('docker_pidfile'), 'false', '']);
      }
      if (selfHosted) {
        process.stdout.write(
          'eatmydata: keep: true: on this self-hosted runner, later jobs keep eatmydata as Docker\'s default runtime and dpkg\'s\n',
        );
      }
      return;
    }
    takeBack(prefix);
    if (selfHosted) {
      process.stdout.write(
        'eatmydata: this self-hosted runner is as before the job: Docker\'s default runtime and dpkg taken back (keep: true leaves them)\n',
      );
    }
  } catch (error) {
    fail(error);
  }
}

module.exports = { run };

// Run by the runner (node action/post.js); @github/local-action calls run().
if (require.main === module) run();
