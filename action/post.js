// The Action's post step: the services main recreated removed; the
// account of the containers this job's Docker ran under the runtime, as
// a summary on the job's page, with those services; then,
// unless `keep: true`, what main did taken back (Docker's default runtime
// by `configure docker --remove` and a reload, the dpkg link and apt's
// setting), which matters on a self-hosted runner, whose next jobs would
// otherwise keep it. The installed command stays (inert on its own).
'use strict';

const fs = require('fs');
const { enabled, fail, fingerprint, state, step } = require('./common.js');
const services = require('./services.js');


// What main recreated (services.js's account of each), or none.
function recreated() {
  try {
    return JSON.parse(state('services') || '[]');
  } catch {
    return [];
  }
}

// The services main recreated, removed before the summary so that the
// account counts their runs, and so that the runner's own clean-up (its
// originals, by id, then the job's network) finds nothing of ours.
function removeServices(done) {
  for (const line of services.remove(done)) process.stdout.write(`${line}\n`);
}

function summary(prefix, done) {
  // Those running before the action that still ran under runc.
  const moved = done.filter((service) => service.id && !service.left).length;
  const before = Math.max(0, Number(state('running_before') || '0') - moved);
  const markdown =
    step('summary.sh', [prefix, state('since'), state('docker') || 'false', String(before)], { capture: true }) +
    services.markdown(done);
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
    if (prefix === '') {
      // main stopped before it changed anything, or ran apart from this
      // step (local-action keeps main's state within its process only).
      process.stdout.write(
        'eatmydata: nothing to take back: main saved no state (it stopped before changing anything, or ran apart from this post step)\n',
      );
      return;
    }
    const done = recreated();
    removeServices(done);
    if (enabled('summary', 'true')) summary(prefix, done);
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
