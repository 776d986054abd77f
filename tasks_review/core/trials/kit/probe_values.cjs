// Values of equivalence probes as plain JSON, in Node: the same tags as probe_values.py
// ({"$float": "nan"}, {"$int": "<digits>"}, {"$undefined": true}, {"$dict": [[k, v], ...]}).
// Required by the probe runner (probe_runner.cjs) and the keep-time tracer (probekit/trace.cjs).
'use strict';

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

module.exports = { Unencodable, encode, decode, encodeResult };
