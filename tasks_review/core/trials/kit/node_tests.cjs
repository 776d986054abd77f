'use strict';
// How node:test's test(), it(), describe() and suite() take their arguments, and a describe
// that keeps the names of the suites being defined. The grader kit's control copies
// (node_controls.mjs) and the keep-time tracer (probekit/trace.cjs) share them, so both name a
// test as the grader's reports do (node_reporter.cjs): the test file's path, the names of its
// suites and its own, joined by " > ".

function parse(args) {
  let [name, options, fn] = args;
  if (typeof name === 'function') {
    fn = name;
    options = {};
    name = undefined;
  } else if (name !== null && typeof name === 'object') {
    fn = options;
    options = name;
    name = undefined;
  } else if (typeof options === 'function') {
    fn = options;
    options = {};
  }
  if (name === undefined) name = (typeof fn === 'function' && fn.name) || '<anonymous>';
  return { name: String(name), options: options || {}, fn };
}

// `real` (describe or suite) whose body runs with its name on `stack`; `call(real, args)` makes
// the call (the kit keeps node:test's idea of the file it was called from).
function withSuites(real, stack, call) {
  return Object.assign(function (...args) {
    const { name, options, fn } = parse(args);
    const body =
      typeof fn === 'function'
        ? function (...inner) {
            stack.push(name);
            try {
              return fn.apply(this, inner);
            } finally {
              stack.pop();
            }
          }
        : fn;
    return call(real, [name, options, body]);
  }, real);
}

module.exports = { parse, withSuites };
