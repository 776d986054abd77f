'use strict';
// traj2env: two contradictory control tests in every test file's process of `node --test`.
//
// shim.py preloads this with --require; node passes the preload on to each test file's
// child process, where NODE_TEST_CONTEXT is set (the runner's own process has it unset and
// does nothing here). The controls are registered on a later turn of the event loop, after the
// test file and everything it requires have run, and assert through the same node:assert
// module the tests use: a patch that forces passes forces the must-fail control to pass too.
if (process.env.NODE_TEST_CONTEXT) {
  const nonce = process.env.TRAJ2ENV_NONCE || '';
  const { test } = require('node:test');
  const assert = require('node:assert');
  setImmediate(() => {
    test(`traj2env control must pass ${nonce}`, () => {
      assert.strictEqual(1, 1);
    });
    test(`traj2env control must fail ${nonce}`, () => {
      assert.strictEqual(1, 2);
    });
  });
}
