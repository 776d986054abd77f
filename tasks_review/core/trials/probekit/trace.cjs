// traj2env keep-time call tracer (Node, CommonJS): which of the project's exported functions the
// tests call, and with what. Preloaded through NODE_OPTIONS=--require in every node process the
// recorded check starts, only at keep time and only on the reference files. A test file that
// requires a project module gets a copy of its exports whose functions note each call's
// arguments (plain data only, as probe_runner.cjs encodes them); other modules get the real
// exports. Each call also notes the id of the test that made it: node:test's test, it, describe
// and suite are wrapped so every test body runs under its id, the test file's path and the
// names of its suites and its own joined by " > ", as the grader's reports name it
// (node_controls.mjs, node_reporter.cjs). At exit each process writes
// $TRAJ2ENV_TRACE_OUT/trace-<pid>.json.
'use strict';
const { AsyncLocalStorage } = require('node:async_hooks');
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');

const OUT = process.env.TRAJ2ENV_TRACE_OUT;
const PROJECT = (process.env.TRAJ2ENV_TRACE_PROJECT || '').replace(/\/+$/, '');
const TESTS = new Set(JSON.parse(process.env.TRAJ2ENV_TRACE_TESTS || '[]'));
const MAX = 3000;

if (OUT && PROJECT) {
  // Beside this file where the probe kit is installed; in the source tree, in the grader kit.
  const kit = (name) => {
    const beside = path.join(__dirname, name);
    return require(fs.existsSync(beside) ? beside : `../kit/${name}`);
  };
  const { encode } = kit('probe_values.cjs');
  const { parse, withSuites } = kit('node_tests.cjs');
  const direct = (real, args) => real(...args);
  const calls = [];
  const seen = new Map();
  const rel = (file) => (file && file.startsWith(PROJECT + '/') ? file.slice(PROJECT.length + 1) : null);
  const isTest = (r) => {
    if (TESTS.has(r)) return true;
    const parts = r.split('/');
    const name = parts[parts.length - 1];
    return /(^test[-_.]|[-_.]test\.[cm]?js$|\.spec\.[cm]?js$)/.test(name) ||
      parts.slice(0, -1).some((p) => p === 'test' || p === 'tests' || p === '__tests__');
  };
  const running = new AsyncLocalStorage();
  const note = (module, name, args) => {
    let encoded;
    try {
      encoded = args.map((a) => encode(a));
    } catch {
      return;
    }
    const test = running.getStore();
    const key = JSON.stringify([module, name, encoded]);
    const known = seen.get(key);
    if (known) {
      if (test && !known.tests.includes(test)) known.tests.push(test);
      return;
    }
    if (calls.length >= MAX) return;
    const call = { module, function: name, args: encoded, kwargs: {}, tests: test ? [test] : [] };
    seen.set(key, call);
    calls.push(call);
  };
  const isClass = (fn) => /^class[\s{]/.test(Function.prototype.toString.call(fn));
  const wrap = (module, name, fn) => {
    if (isClass(fn)) return fn;
    const wrapped = function (...args) {
      if (new.target) return Reflect.construct(fn, args, new.target);
      note(module, name, args);
      return Reflect.apply(fn, this, args);
    };
    Object.defineProperties(wrapped, Object.getOwnPropertyDescriptors(fn));
    return wrapped;
  };
  const wrapExports = (module, exported) => {
    if (typeof exported === 'function') {
      const main = wrap(module, '', exported);
      for (const key of Object.keys(exported)) {
        if (typeof exported[key] === 'function') main[key] = wrap(module, key, exported[key]);
      }
      return main;
    }
    if (!exported || typeof exported !== 'object') return exported;
    const copy = Object.create(Object.getPrototypeOf(exported));
    for (const key of Object.keys(exported)) {
      const value = exported[key];
      copy[key] = typeof value === 'function' ? wrap(module, key, value) : value;
    }
    return copy;
  };
  const original = Module.prototype.require;
  Module.prototype.require = function (id) {
    const exported = original.apply(this, arguments);
    try {
      const caller = rel(this.filename);
      if (caller === null || !isTest(caller)) return exported;
      const target = Module._resolveFilename(id, this);
      const module = rel(target);
      if (module === null || isTest(module) || target.includes('/node_modules/')) return exported;
      return wrapExports(module, exported);
    } catch {
      return exported;
    }
  };
  // node:test, as the test file sees it: each test body runs under its id.
  const file = process.argv[1] || '';
  const suites = [];
  const underId = (fn, id) => {
    if (typeof fn !== 'function') return fn;
    if (fn.length >= 2) {
      return function (t, done) {
        return running.run(id, () => fn.call(this, t, done));
      };
    }
    return function (t) {
      return running.run(id, () => fn.call(this, t));
    };
  };
  const testing = (real) =>
    Object.assign(function (...args) {
      const { name, options, fn } = parse(args);
      return real(name, options, underId(fn, [file, ...suites, name].join(' > ')));
    }, real);
  let wrappedTest = null;
  const load = Module._load;
  Module._load = function (request, ...rest) {
    const loaded = load.call(this, request, ...rest);
    if (request !== 'node:test' && request !== 'test') return loaded;
    if (!wrappedTest) {
      wrappedTest = testing(loaded);
      wrappedTest.test = wrappedTest;
      wrappedTest.it = testing(loaded.it);
      wrappedTest.describe = withSuites(loaded.describe, suites, direct);
      if (loaded.suite) wrappedTest.suite = withSuites(loaded.suite, suites, direct);
    }
    return wrappedTest;
  };
  process.on('exit', () => {
    try {
      fs.mkdirSync(OUT, { recursive: true });
      const record = { language: 'node', cwd: process.cwd(), paths: [], calls };
      fs.writeFileSync(path.join(OUT, `trace-${process.pid}.json`), JSON.stringify(record));
    } catch {
      // nothing to add: a trace that is not written gives no probe
    }
  });
}
