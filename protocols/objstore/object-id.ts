/**
 * Object ids: '$' + 24 lowercase hex characters. The first 12 hex characters are the creation
 * time in milliseconds since the epoch as a 48-bit big-endian integer (so ids sort by creation
 * time, and the FUSE mount derives timestamps from them); the last 12 are 6 random bytes.
 * Pure: the caller supplies the clock and the randomness.
 */

export const OBJECT_ID_RE = /^\$[0-9a-f]{24}$/;

/** 2^48: the first instant that no longer fits in the id's 48-bit timestamp (year 10889). */
const TIME_LIMIT = 2 ** 48;

export function newObjectId(nowMs: number, random: Uint8Array): string {
  if (!Number.isSafeInteger(nowMs) || nowMs < 0 || nowMs >= TIME_LIMIT) {
    throw new RangeError(`object id time must be an integer from 0 to 2^48-1 ms, got ${String(nowMs)}`);
  }
  if (!(random instanceof Uint8Array) || random.length < 6) {
    throw new RangeError(`object id needs at least 6 random bytes, got ${random instanceof Uint8Array ? random.length : typeof random}`);
  }
  let rnd = '';
  for (let i = 0; i < 6; i++) rnd += (random[i] as number).toString(16).padStart(2, '0');
  return '$' + nowMs.toString(16).padStart(12, '0') + rnd;
}

export function isObjectId(s: string): boolean {
  return typeof s === 'string' && OBJECT_ID_RE.test(s);
}

export function objectIdTime(id: string): number {
  if (!isObjectId(id)) throw new TypeError(`not an object id: ${JSON.stringify(id)}`);
  return parseInt(id.slice(1, 13), 16);
}
