// traj2env probe runner (Node): call the project's exported functions on given inputs and print
// the outcomes. The grader starts it as the unprivileged `grader` user in a fresh process after
// the recorded check; at keep time the host runs it on the reference and on the starting files.
// It knows no expected value; root compares in its own process (see probe_runner.py, whose
// request and report it shares: `module` is a project-relative file, `function` an export name,
// "" for the module itself).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const { decode, encodeResult } = require(path.join(__dirname, 'probe_values.cjs'));

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
  writeAll(JSON.stringify({ outcomes }));
  process.exit(0);
}

// One writeSync may write part of a large report to a pipe (and a non-blocking one may refuse
// for a moment): the rest follows until every byte is out.
function writeAll(text) {
  const data = Buffer.from(text);
  let offset = 0;
  while (offset < data.length) {
    try {
      offset += fs.writeSync(1, data, offset);
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err;
    }
  }
}

main().catch((err) => {
  process.stderr.write(`probe runner: ${err && err.stack}\n`);
  process.exit(3);
});
