/**
 * SDES key-salt encoding (RFC 4568 §6.1 `inline:` key||salt, base64).
 *
 * Decision: strict. Exactly 40 characters of the standard base64 alphabet (30 bytes need no
 * padding); lifetime and MKI suffixes ("|2^31|1:1") are split off by the SDP layer before this.
 */
import { SDES_KEY_BYTES } from '../types.js';

const INLINE_KEY = /^[A-Za-z0-9+/]{40}$/;

/** The 30-byte master key ‖ master salt, or null unless the text is exactly that in base64. */
export function decodeSdesKey(base64: string): Uint8Array | null {
  if (typeof base64 !== 'string' || !INLINE_KEY.test(base64)) return null;
  const b = Buffer.from(base64, 'base64');
  return b.length === SDES_KEY_BYTES ? new Uint8Array(b) : null;
}

export function encodeSdesKey(keySalt: Uint8Array): string {
  if (keySalt.length !== SDES_KEY_BYTES) throw new RangeError(`SDES key must be ${SDES_KEY_BYTES} bytes`);
  return Buffer.from(keySalt.buffer, keySalt.byteOffset, keySalt.byteLength).toString('base64');
}
