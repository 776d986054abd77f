// traj2env keep-time call tracer (Node, CommonJS): which of the project's exported functions the
// tests call, and with what. Preloaded through NODE_OPTIONS=--require in every node process the
// recorded check starts, only at keep time and only on the reference files. A test file that
// requires a project module gets a copy of its exports whose functions note each call's
// arguments (plain data only, as probe_runner.cjs encodes them); other modules get the real
// exports. At exit each process writes $TRAJ2ENV_TRACE_OUT/trace-<pid>.json.
'use strict';
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');

const OUT = process.env.TRAJ2ENV_TRACE_OUT;
const PROJECT = (process.env.TRAJ2ENV_TRACE_PROJECT || '').replace(/\/+$/, '');
const TESTS = new Set(JSON.parse(process.env.TRAJ2ENV_TRACE_TESTS || '[]'));
const MAX = 3000;

if (OUT && PROJECT) {
  // Beside this file where the probe kit is installed; in the source tree, in the grader kit.
  const beside = path.join(__dirname, 'probe_values.cjs');
  const { encode } = require(fs.existsSync(beside) ? beside : '../kit/probe_values.cjs');
  const calls = [];
  const seen = new Set();
  const rel = (file) => (file && file.startsWith(PROJECT + '/') ? file.slice(PROJECT.length + 1) : null);
  const isTest = (r) => {
    if (TESTS.has(r)) return true;
    const parts = r.split('/');
    const name = parts[parts.length - 1];
    return /(^test[-_.]|[-_.]test\.[cm]?js$|\.spec\.[cm]?js$)/.test(name) ||
      parts.slice(0, -1).some((p) => p === 'test' || p === 'tests' || p === '__tests__');
  };
  const note = (module, name, args, test) => {
    if (calls.length >= MAX) return;
    let encoded;
    try {
      encoded = args.map((a) => encode(a));
    } catch {
      return;
    }
    const key = JSON.stringify([module, name, encoded]);
    if (seen.has(key)) return;
    seen.add(key);
    calls.push({ module, function: name, args: encoded, kwargs: {}, test });
  };
  const isClass = (fn) => /^class[\s{]/.test(Function.prototype.toString.call(fn));
  const wrap = (module, name, fn, test) => {
    if (isClass(fn)) return fn;
    const wrapped = function (...args) {
      if (new.target) return Reflect.construct(fn, args, new.target);
      note(module, name, args, test);
      return fn.apply(this, args);
    };
    Object.defineProperties(wrapped, Object.getOwnPropertyDescriptors(fn));
    return wrapped;
  };
  const wrapExports = (module, exported, test) => {
    if (typeof exported === 'function') {
      const main = wrap(module, '', exported, test);
      for (const key of Object.keys(exported)) {
        if (typeof exported[key] === 'function') main[key] = wrap(module, key, exported[key], test);
      }
      return main;
    }
    if (!exported || typeof exported !== 'object') return exported;
    const copy = Object.create(Object.getPrototypeOf(exported));
    for (const key of Object.keys(exported)) {
      const value = exported[key];
      copy[key] = typeof value === 'function' ? wrap(module, key, value, test) : value;
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
      return wrapExports(module, exported, caller);
    } catch {
      return exported;
    }
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
