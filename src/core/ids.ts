// Identifiers: a prefix naming the resource and a random part of 64 bits (16 hex digits).
// Run ids start with the creation time, so they sort by when the run was made.

type IdPrefix = 'pl' | 'run' | 'trg' | 'prj' | 'con' | 'ch' | 'inb' | 'hrn' | 'rnr';

const idPattern = /^(pl|run|trg|prj|con|ch|inb|hrn|rnr)_[0-9a-z]{16,32}$/;

// Random bytes for ids come from a pool refilled 4 KiB at a time: one call to the system's random
// source per 512 ids instead of one per id (it was 6% of a webhook delivery's CPU). Ids are not
// secrets; `randomSecret` draws its bytes fresh.
const pool = new Uint8Array(4096);
let poolOffset = pool.length;
const hexOfByte = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** `bytes` random bytes (at most 4096) as lower-case hex. */
export function randomHex(bytes: number): string {
  if (poolOffset + bytes > pool.length) {
    globalThis.crypto.getRandomValues(pool);
    poolOffset = 0;
  }
  let hex = '';
  for (let index = poolOffset; index < poolOffset + bytes; index++) hex += hexOfByte[pool[index]!];
  poolOffset += bytes;
  return hex;
}

/** A new id such as `pl_9f2c4e1a0b3d5c7e`. */
export function newId(prefix: Exclude<IdPrefix, 'run'>): string {
  return `${prefix}_${randomHex(8)}`;
}

let lastRunTime = 0;

/**
 * A new run id: `run_` + the creation time (9 base-36 digits, strictly increasing within this
 * process) + 16 random hex digits. Sorting run ids sorts runs by creation.
 */
export function newRunId(now: number = Date.now()): string {
  lastRunTime = Math.max(now, lastRunTime + 1);
  return `run_${lastRunTime.toString(36).padStart(9, '0')}${randomHex(8)}`;
}

/** True when `value` is an id of this prefix in the shape `newId`/`newRunId` make (safe in a path). */
export function isId(value: unknown, prefix: IdPrefix): value is string {
  return typeof value === 'string' && value.startsWith(prefix + '_') && idPattern.test(value);
}

/** A random secret: `bytes` random bytes, base64url without padding. */
export function randomSecret(bytes = 24): string {
  const buffer = new Uint8Array(bytes);
  globalThis.crypto.getRandomValues(buffer);
  let binary = '';
  for (const byte of buffer) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
