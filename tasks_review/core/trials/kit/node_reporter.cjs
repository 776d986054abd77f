'use strict';
// traj2env: a `node --test` reporter that reports every test's outcome to the grader.
//
// It runs in the runner's own process, which loads no project code: test files run in child
// processes. Ids are the test file's path and the names of the suites and the test, joined by
// " > ", as node_controls.mjs names the tests it copies. Suites are not reported (their tests
// are); a test file whose process failed is reported as a failed test of that file.
const net = require('node:net');
const path = require('node:path');

module.exports = async function* traj2envReporter(source) {
  const socket = net.createConnection(path.join(__dirname, 'report.sock'));
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.resume(); // the grader's greeting needs no answer
  const send = (message) => socket.write(`${JSON.stringify(message)}\n`);
  send({ t: 'hello', kind: 'node-test', argv: process.argv.slice(1) });
  const stacks = new Map();
  for await (const event of source) {
    const data = event.data || {};
    if (event.type === 'test:start') {
      const stack = stacks.get(data.file) || [];
      stack.length = data.nesting;
      stack.push(data.name);
      stacks.set(data.file, stack);
    } else if (event.type === 'test:pass' || event.type === 'test:fail') {
      if (data.details && data.details.type === 'suite') continue;
      const parents = (stacks.get(data.file) || []).slice(0, data.nesting);
      const id = [data.file || '', ...parents, data.name].join(' > ');
      let outcome = event.type === 'test:pass' ? 'passed' : 'failed';
      if (data.skip) outcome = 'skipped';
      if (data.todo) outcome = event.type === 'test:pass' ? 'skipped' : 'xfailed';
      send({ t: 'case', id, outcome });
    }
  }
  send({ t: 'end' });
  await new Promise((resolve) => socket.end(resolve));
};
