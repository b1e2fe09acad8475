import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/**
 * A short, stable fingerprint of a tool call's arguments: equal for arguments that are equal as
 * JSON regardless of key order, different (up to hash collisions) otherwise.
 *
 * The value is serialised canonically — object keys sorted, `undefined` properties left out as
 * JSON does, `NaN`/`Infinity` as `null`, a `bigint` as its decimal digits, a cycle as
 * `"[Circular]"` — then hashed with SHA-256; the result is the first 16 hex digits (64 bits).
 * A raw argument string (what a model produced) is fingerprinted as that string.
 *
 * Pure; never throws.
 */
export function fingerprintArguments(value: unknown): string {
  // A synchronous SHA-256 in plain JavaScript (Web Crypto's digest is asynchronous): runs on every runtime.
  return bytesToHex(sha256(utf8ToBytes(canonicalJson(value, new Set())))).slice(0, 16);
}

function canonicalJson(value: unknown, ancestors: Set<object>): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return JSON.stringify(`${value.toString()}n`);
    case 'object':
      break;
    default:
      // functions and symbols are not arguments a model can send
      return 'null';
  }
  const object = value as object;
  if (ancestors.has(object)) return '"[Circular]"';
  const toJson = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJson === 'function') return canonicalJson(toJson.call(object), ancestors);
  ancestors.add(object);
  let text: string;
  if (Array.isArray(object)) {
    text = `[${object.map((item: unknown) => canonicalJson(item, ancestors)).join(',')}]`;
  } else {
    const record = object as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of Object.keys(record).sort()) {
      const item = record[key];
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      parts.push(`${JSON.stringify(key)}:${canonicalJson(item, ancestors)}`);
    }
    text = `{${parts.join(',')}}`;
  }
  ancestors.delete(object);
  return text;
}
