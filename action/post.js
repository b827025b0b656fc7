// The Action's post step: the account of the containers this job's
// Docker ran under the runtime, as a summary on the job's page.
'use strict';

const fs = require('fs');
const { enabled, state, step, fail } = require('./common.js');

try {
  if (enabled('summary') && state('prefix') !== '') {
    const markdown = step('summary.sh', [
      state('prefix'),
      state('since'),
      state('docker') || 'false',
      state('running_before') || '0',
    ], true);
    const file = process.env.GITHUB_STEP_SUMMARY;
    if (file) fs.appendFileSync(file, markdown);
    else process.stdout.write(markdown);
  }
} catch (error) {
  fail(error);
}
