// traj2env: control copies among the real tests in every test file's process of `node --test`.
//
// shim.py preloads this with --import; node passes it on to each test file's process, where
// NODE_TEST_CONTEXT is set (the runner's own process has it unset and does nothing here). Before
// the test file runs, the process asks the grader (its socket beside this file) which of the
// file's tests to copy. Each copy runs the very test function under a random name, registered
// beside the original: a verbatim one, or one whose first assertion through node:assert is
// negated (strictEqual -> notStrictEqual ...). Real tests and copies run through the same
// wrapper, so no name, file or stack tells them apart. Outcomes are reported by the runner's own
// process (node_reporter.cjs), from what this process tells it.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const { parse, withSuites } = createRequire(import.meta.url)('./node_tests.cjs');

const NEGATED = {
  strictEqual: 'notStrictEqual',
  notStrictEqual: 'strictEqual',
  deepStrictEqual: 'notDeepStrictEqual',
  notDeepStrictEqual: 'deepStrictEqual',
  equal: 'notEqual',
  notEqual: 'equal',
  deepEqual: 'notDeepEqual',
  notDeepEqual: 'deepEqual',
  match: 'doesNotMatch',
  doesNotMatch: 'match',
  throws: 'doesNotThrow',
  doesNotThrow: 'throws',
  rejects: 'doesNotReject',
  doesNotReject: 'rejects',
};

function connect(socketPath, hello) {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath);
    let buffer = '';
    socket.setEncoding('utf8');
    socket.once('error', reject);
    socket.once('connect', () => socket.write(`${JSON.stringify(hello)}\n`));
    const onData = (chunk) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.unref(); // pending writes still go out; the test process may end when it is done
      const send = (message) => socket.write(`${JSON.stringify(message)}\n`);
      resolve({ plan: JSON.parse(buffer.slice(0, end)), send });
    };
    socket.on('data', onData);
  });
}

function negateThrough(assert, store) {
  const originals = {};
  for (const name of [...Object.keys(NEGATED), 'ok']) {
    if (typeof assert[name] === 'function') originals[name] = assert[name];
  }
  for (const name of Object.keys(originals)) {
    assert[name] = function (...args) {
      const current = store.getStore();
      if (current && current.fail && current.calls++ === current.at) {
        if (name === 'ok') return originals.ok.call(this, !args[0], ...args.slice(1));
        return originals[NEGATED[name]].apply(this, args);
      }
      return originals[name].apply(this, args);
    };
  }
}

function shuffle(items) {
  for (let i = items.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

function install(require, channel, file) {
  const { plan, send } = channel;
  const store = new AsyncLocalStorage();
  const assert = require('node:assert');
  negateThrough(assert, store);
  if (assert.strict && assert.strict !== assert) negateThrough(assert.strict, store);
  const planned = new Map();
  for (const copy of plan.copies || []) {
    if (!planned.has(copy.of)) planned.set(copy.of, []);
    planned.get(copy.of).push(copy);
  }
  const passNames = [...(plan.pass_names || [])];
  const failNames = [...(plan.fail_names || [])];
  const suites = [];
  // node:test records where test() was called from; calling it from a function compiled
  // under the test file's name keeps that the test file, not this kit.
  const call = vm.compileFunction('return real.apply(undefined, args);', ['real', 'args'], {
    filename: file,
  });

  const through = (fn, mode) => {
    if (typeof fn !== 'function') return fn;
    if (fn.length >= 2) {
      return function (t, done) {
        return store.run({ ...mode, calls: 0 }, () => fn.call(this, t, done));
      };
    }
    return function (t) {
      return store.run({ ...mode, calls: 0 }, () => fn.call(this, t));
    };
  };

  const register = (real, args) => {
    const { name, options, fn } = parse(args);
    const result = call(real, [name, options, through(fn, { fail: false })]);
    if (typeof fn !== 'function' || options.skip || options.todo) return result;
    const id = [file, ...suites, name].join(' > ');
    const copies = [...(planned.get(id) || [])];
    if (plan.all && passNames.length && failNames.length) {
      copies.push({ name: passNames.shift(), fail: false }, { name: failNames.shift(), fail: true });
    }
    for (const copy of shuffle(copies)) {
      send({ t: 'copy', of: id, name: copy.name });
      call(real, [copy.name, options, through(fn, { fail: copy.fail, at: copy.at || 0 })]);
    }
    return result;
  };

  const nodeTest = require('node:test');
  const test = Object.assign(function test(...args) {
    return register(nodeTest, args);
  }, nodeTest);
  test.test = test;
  test.it = Object.assign(function it(...args) {
    return register(nodeTest.it, args);
  }, nodeTest.it);
  test.describe = withSuites(nodeTest.describe, suites, call);
  if (nodeTest.suite) test.suite = withSuites(nodeTest.suite, suites, call);
  const Module = require('node:module');
  const load = Module._load;
  Module._load = function (request, ...rest) {
    if (request === 'node:test' || request === 'test') return test;
    return load.call(this, request, ...rest);
  };
}

if (process.env.NODE_TEST_CONTEXT) {
  const require = createRequire(import.meta.url);
  const kit = path.dirname(fileURLToPath(import.meta.url));
  const file = process.argv[1] || '';
  const channel = await connect(path.join(kit, 'report.sock'), {
    t: 'hello',
    kind: 'node-file',
    file,
  });
  install(require, channel, file);
}
