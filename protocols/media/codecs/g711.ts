/**
 * G.711 μ-law (PCMU) and A-law (PCMA), 16-bit linear PCM in and out.
 *
 * Decisions:
 * - The encoders follow the ITU-T reference software (G.191 STL `ulaw_compress`/`alaw_compress`):
 *   μ-law uses the 14 most significant bits, A-law the 13 most significant bits, and negative
 *   samples are taken in one's complement, so −1 encodes like 0 (μ-law 0x7F, A-law 0x55) and the
 *   code is symmetric about zero. A sample on a decision value goes to the interval above it.
 * - ffmpeg's pcm_mulaw/pcm_alaw encoders are not this reference: their table puts decisions at
 *   the midpoints of neighbouring reconstruction values (G.711's differ at segment edges) and
 *   truncates negative samples towards −∞. They pick the neighbouring code for 964 of the 65536
 *   16-bit inputs, mostly small negative ones (5-7 % of the samples of a sine sweep). Decoding
 *   is identical. Both are checked in test/media/g711.test.ts.
 * - Decoders are 256-entry tables built once from the G.711 reconstruction rule (16-bit scale:
 *   μ-law peak ±32124, A-law peak ±32256).
 * - Encoders are 65536-entry tables built once (64 KiB each), so the per-frame work is a lookup.
 * - `out` lets the hot path reuse its buffers; without it a new array is returned.
 */

function ulawExpand(code: number): number {
  const sign = code < 0x80 ? -1 : 1;
  const m = ~code & 0xff;
  const exponent = (m >> 4) & 0x07;
  const mantissa = m & 0x0f;
  const step = 4 << (exponent + 1);
  return sign * ((0x80 << exponent) + step * mantissa + step / 2 - 4 * 33);
}

function alawExpand(code: number): number {
  const ix = (code ^ 0x55) & 0x7f;
  const exponent = ix >> 4;
  let mant = ix & 0x0f;
  if (exponent > 0) mant += 16;
  mant = (mant << 4) + 8;
  if (exponent > 1) mant <<= exponent - 1;
  return code > 127 ? mant : -mant;
}

function ulawCompress(x: number): number {
  let absno = x < 0 ? (~x >> 2) + 33 : (x >> 2) + 33;
  if (absno > 0x1fff) absno = 0x1fff;
  let i = absno >> 6;
  let segno = 1;
  while (i !== 0) {
    segno++;
    i >>= 1;
  }
  const high = 8 - segno;
  const low = 15 - ((absno >> segno) & 0x0f);
  const code = (high << 4) | low;
  return x >= 0 ? code | 0x80 : code;
}

function alawCompress(x: number): number {
  let ix = x < 0 ? ~x >> 4 : x >> 4;
  if (ix > 15) {
    let exponent = 1;
    while (ix > 31) {
      ix >>= 1;
      exponent++;
    }
    ix = ix - 16 + (exponent << 4);
  }
  if (x >= 0) ix |= 0x80;
  return ix ^ 0x55;
}

const ULAW_DECODE = new Int16Array(256);
const ALAW_DECODE = new Int16Array(256);
for (let c = 0; c < 256; c++) {
  ULAW_DECODE[c] = ulawExpand(c);
  ALAW_DECODE[c] = alawExpand(c);
}
/** Indexed by sample + 32768. */
const ULAW_ENCODE = new Uint8Array(65536);
const ALAW_ENCODE = new Uint8Array(65536);
for (let i = 0; i < 65536; i++) {
  ULAW_ENCODE[i] = ulawCompress(i - 32768);
  ALAW_ENCODE[i] = alawCompress(i - 32768);
}

function outFor<T extends Uint8Array | Int16Array>(out: T | undefined, n: number, make: (n: number) => T): T {
  if (out === undefined) return make(n);
  if (out.length < n) throw new RangeError(`output array too short: ${out.length} < ${n}`);
  return out.length === n ? out : (out.subarray(0, n) as T);
}

function encodeWith(table: Uint8Array, pcm: Int16Array, out?: Uint8Array): Uint8Array {
  const o = outFor(out, pcm.length, (n) => new Uint8Array(n));
  for (let i = 0; i < pcm.length; i++) o[i] = table[(pcm[i] as number) + 32768] as number;
  return o;
}

function decodeWith(table: Int16Array, b: Uint8Array, out?: Int16Array): Int16Array {
  const o = outFor(out, b.length, (n) => new Int16Array(n));
  for (let i = 0; i < b.length; i++) o[i] = table[b[i] as number] as number;
  return o;
}

/** μ-law encode, one byte per sample. `out` (if given) must be at least as long as `pcm`. */
export function ulawEncode(pcm: Int16Array, out?: Uint8Array): Uint8Array {
  return encodeWith(ULAW_ENCODE, pcm, out);
}

/** μ-law decode, one sample per byte. */
export function ulawDecode(b: Uint8Array, out?: Int16Array): Int16Array {
  return decodeWith(ULAW_DECODE, b, out);
}

/** A-law encode, one byte per sample (even bits inverted, as on the wire). */
export function alawEncode(pcm: Int16Array, out?: Uint8Array): Uint8Array {
  return encodeWith(ALAW_ENCODE, pcm, out);
}

/** A-law decode, one sample per byte. */
export function alawDecode(b: Uint8Array, out?: Int16Array): Int16Array {
  return decodeWith(ALAW_DECODE, b, out);
}

/** One μ-law code word's 16-bit value (for tests and tables). */
export function ulawValue(code: number): number {
  return ULAW_DECODE[code & 0xff] as number;
}

/** One A-law code word's 16-bit value. */
export function alawValue(code: number): number {
  return ALAW_DECODE[code & 0xff] as number;
}
