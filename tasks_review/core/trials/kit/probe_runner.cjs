// traj2env probe runner (Node): call the project's exported functions on given inputs and print
// the outcomes. The grader starts it as the unprivileged `grader` user in a fresh process after
// the recorded check; at keep time the host runs it on the reference and on the starting files.
// It knows no expected value; root compares in its own process (see probe_runner.py, whose
// request and report it shares: `module` is a project-relative file, `function` an export name,
// "" for the module itself).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const MAX_DEPTH = 8;
const MAX_ITEMS = 200;
const MAX_TEXT = 4000;

class Unencodable extends Error {}

function encode(value, depth = 0) {
  if (depth > MAX_DEPTH) throw new Unencodable('nested too deeply');
  if (value === null || typeof value === 'boolean') return value;
  if (value === undefined) return { $undefined: true };
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return Object.is(value, -0) ? 0 : value;
    return { $float: Number.isNaN(value) ? 'nan' : value > 0 ? 'inf' : '-inf' };
  }
  if (typeof value === 'bigint') return { $int: value.toString() };
  if (typeof value === 'string') {
    if (value.length > MAX_TEXT) throw new Unencodable('string too long');
    return value;
  }
  if (Array.isArray(value)) {
    if (value.length > MAX_ITEMS) throw new Unencodable('too many items');
    return value.map((item) => encode(item, depth + 1));
  }
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      throw new Unencodable(value.constructor ? value.constructor.name : 'object');
    }
    const keys = Object.keys(value);
    if (keys.length > MAX_ITEMS) throw new Unencodable('too many items');
    if (keys.every((k) => !k.startsWith('$'))) {
      const out = {};
      for (const k of keys) out[k] = encode(value[k], depth + 1);
      return out;
    }
    return { $dict: keys.map((k) => [k, encode(value[k], depth + 1)]) };
  }
  throw new Unencodable(typeof value);
}

function decode(value) {
  if (Array.isArray(value)) return value.map(decode);
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  if (keys.length === 1) {
    const inner = value[keys[0]];
    switch (keys[0]) {
      case '$float': return inner === 'nan' ? NaN : inner === 'inf' ? Infinity : -Infinity;
      case '$int': return BigInt(inner);
      case '$undefined': return undefined;
      case '$tuple': return inner.map(decode);
      case '$dict': return Object.fromEntries(inner.map(([k, v]) => [decode(k), decode(v)]));
      default: break;
    }
  }
  const out = {};
  for (const k of keys) out[k] = decode(value[k]);
  return out;
}

function encodeResult(value) {
  try {
    const returns = encode(value);
    if (JSON.stringify(returns).length > 20000) throw new Unencodable('too large');
    return { returns };
  } catch (err) {
    if (err instanceof Unencodable) return { opaque: err.message };
    return { opaque: 'unreadable' };
  }
}

function errorName(err) {
  try {
    if (err && typeof err.name === 'string') return err.name;
    return typeof err;
  } catch {
    return 'unreadable';
  }
}

function withTimeout(promise, ms) {
  let timer;
  const limit = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ timeout: true }), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

async function callOne(request, call) {
  let fn;
  let args;
  try {
    const exported = require(path.resolve(request.project, call.module));
    fn = call.function ? exported[call.function] : exported;
    if (typeof fn !== 'function') return { unavailable: 'not callable' };
    args = decode(call.args || []);
  } catch (err) {
    return { unavailable: errorName(err) };
  }
  const ms = Math.round(1000 * (request.timeout || 2));
  try {
    const result = fn(...args);
    if (result && typeof result.then === 'function') {
      return await withTimeout(
        Promise.resolve(result).then(encodeResult, (err) => ({ raises: errorName(err) })),
        ms,
      );
    }
    return encodeResult(result);
  } catch (err) {
    return { raises: errorName(err) };
  }
}

async function main() {
  const request = JSON.parse(fs.readFileSync(0, 'utf8'));
  process.chdir(request.workdir || request.project);
  // What the code under test writes to stdout goes to stderr; the report alone goes to fd 1
  // (reopening /dev/fd/1 would need the grader's file to be the grading user's).
  process.stdout.write = process.stderr.write.bind(process.stderr);
  const outcomes = {};
  for (const call of request.calls || []) {
    outcomes[String(call.id)] = await callOne(request, call);
  }
  fs.writeSync(1, JSON.stringify({ outcomes }));
  process.exit(0);
}

main().catch((err) => {
  process.stderr.write(`probe runner: ${err && err.stack}\n`);
  process.exit(3);
});
