// The Action's main step: install the command, make it Docker's default
// runtime (reloaded, nothing stopped), put dpkg under it, and keep what
// the post step needs to tell the job's account.
'use strict';

const path = require('path');
const { input, enabled, saveState, step, fail, here } = require('./common.js');

try {
  const prefix = input('prefix', '/usr/local');
  // Containers deleted from now on are this job's.
  saveState('since', new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
  saveState('prefix', prefix);
  let file = input('path', '');
  if (file === '') {
    // As the runner's user, whose cargo it is; then installed as root.
    file = step('build.sh', [path.dirname(here), process.env.RUNNER_TEMP || '/tmp'], true, true)
      .trim()
      .split('\n')
      .pop();
  }
  step('install.sh', [prefix, path.resolve(file)]);
  if (enabled('docker')) {
    const running = step('docker.sh', [
      prefix,
      input('docker-config', '/etc/docker/daemon.json'),
      input('docker-pidfile', ''),
      input('builds', 'false'),
      input('systemd-dir', ''),
    ], true);
    process.stdout.write(running);
    const before = /^running before: (\d+)$/m.exec(running);
    saveState('docker', 'true');
    saveState('running_before', before ? before[1] : '0');
  }
  if (enabled('apt')) step('apt.sh', [prefix, '']);
} catch (error) {
  fail(error);
}
