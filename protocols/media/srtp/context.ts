/**
 * SRTP/SRTCP send and receive contexts (RFC 3711) for AES_CM_128_HMAC_SHA1_80 and _32.
 *
 * Decisions:
 * - Tags: SRTP 10 bytes (_80) or 4 bytes (_32); SRTCP always 10 bytes (RFC 4568 §6.2, RFC 3711
 *   §5.2). No MKI (SDES lines with an MKI are refused by the SDP layer).
 * - Receive order: authenticate, then the replay check, then decrypt; per-SSRC state (ROC,
 *   highest SEQ, window) only changes for a packet that authenticated. A packet of an unknown
 *   SSRC authenticates with ROC 0 (RFC 3711 §3.3.1) and then needs a free slot: at most
 *   `maxSsrcs` SSRCs each for SRTP and SRTCP, beyond it 'ssrc-limit' (no eviction, so a flood of
 *   new SSRCs cannot push out established ones). The same bound and window size apply to SRTCP.
 * - Same key, same SSRC, same index again is 'replay' (or 'too-old'), whatever the peer meant:
 *   a restarted peer must negotiate a fresh key; resetReplay() forgets all receive state.
 * - The sender estimates its own ROC from the SEQs it is given (same rule as the receiver), so
 *   out-of-order sends around a wrap work. One SRTCP index (31 bits) is shared by all SSRCs the
 *   context sends for; it wraps at 2^31 (at RTCP rates that is decades; rekey long before).
 * - An SRTCP packet with the E flag clear (authenticated, not encrypted) is accepted as such; we
 *   always send E = 1.
 * - protect* throw on input that is not RTP/RTCP v2 (our own packets: a bug); unprotect* never
 *   throw on packet content.
 * - Snapshots are plain data (numbers, arrays, one Uint8Array): structuredClone/postMessage safe.
 * - Hot path: keys are derived once (KeyObjects, one long-lived AES-ECB cipher per direction, see
 *   kdf.ts); IV, counter and ROC scratch buffers are reused; per packet one output buffer, one
 *   keystream buffer and one HMAC object, no closures.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SrtpSuite } from '../types.js';
import { SDES_KEY_BYTES } from '../types.js';
import { rtpHeaderLength } from '../rtp.js';
import { deriveSessionKeys, writeIv, type SessionKeys } from './kdf.js';
import { ReplayWindow, checkReplayWindowSize, estimateRoc } from './replay.js';

export type SrtpFailure = 'malformed' | 'auth' | 'replay' | 'too-old' | 'ssrc-limit';

export const SRTCP_TAG_BYTES = 10;
const SRTP_TAG_BYTES: Record<SrtpSuite, number> = { AES_CM_128_HMAC_SHA1_80: 10, AES_CM_128_HMAC_SHA1_32: 4 };

/** Authentication tag length of SRTP packets for a suite. */
export function srtpTagLength(suite: SrtpSuite): number {
  return SRTP_TAG_BYTES[suite];
}

export const DEFAULT_MAX_SSRCS = 32;
export const DEFAULT_REPLAY_WINDOW = 128;

export interface SrtpSendState {
  suite: SrtpSuite;
  keySalt: Uint8Array;
  streams: { ssrc: number; roc: number; lastSeq: number }[];
  srtcpIndex: number;
}

export interface SrtpReceiveState {
  suite: SrtpSuite;
  keySalt: Uint8Array;
  maxSsrcs: number;
  replayWindow: number;
  /** Per SSRC: ROC and SEQ of the highest index accepted, window bits relative to it (see ReplayWindow.toWords). */
  rtp: { ssrc: number; roc: number; highestSeq: number; window: number[] }[];
  /** Per sender SSRC: highest SRTCP index accepted and its window bits. */
  rtcp: { ssrc: number; highestIndex: number; window: number[] }[];
}

/** Keys and scratch space of one context (SRTP and SRTCP); shared code of send and receive. */
class Session {
  readonly suite: SrtpSuite;
  readonly keySalt: Uint8Array;
  readonly rtpTag: number;
  private readonly rtp: SessionKeys;
  private readonly rtcp: SessionKeys;
  private readonly iv = Buffer.alloc(16);
  private readonly word = Buffer.alloc(4);

  constructor(suite: SrtpSuite, keySalt: Uint8Array) {
    const tag = Object.hasOwn(SRTP_TAG_BYTES, suite) ? SRTP_TAG_BYTES[suite] : undefined;
    if (tag === undefined) throw new RangeError(`unsupported SRTP suite ${String(suite)}`);
    if (keySalt.length !== SDES_KEY_BYTES) throw new RangeError(`SRTP key and salt must be ${SDES_KEY_BYTES} bytes`);
    this.suite = suite;
    this.keySalt = Uint8Array.from(keySalt);
    this.rtpTag = tag;
    this.rtp = deriveSessionKeys(this.keySalt, false);
    this.rtcp = deriveSessionKeys(this.keySalt, true);
  }

  /** AES-CM of src into out at outOff (encryption and decryption are the same). */
  crypt(rtcp: boolean, ssrc: number, hi: number, lo: number, src: Uint8Array, out: Buffer, outOff: number): void {
    if (src.length === 0) return;
    const k = rtcp ? this.rtcp : this.rtp;
    writeIv(this.iv, k.salt, ssrc, hi, lo);
    k.cipher.xor(this.iv, src, out, outOff);
  }

  /** Full 20-byte HMAC-SHA1 of data (‖ ROC for SRTP when roc is not null). */
  mac(rtcp: boolean, data: Uint8Array, roc: number | null): Buffer {
    const h = createHmac('sha1', rtcp ? this.rtcp.authKey : this.rtp.authKey).update(data);
    if (roc !== null) {
      this.word.writeUInt32BE(roc >>> 0, 0);
      h.update(this.word);
    }
    return h.digest();
  }
}

function u32(b: Uint8Array, o: number): number {
  return (((b[o] as number) << 24) | ((b[o + 1] as number) << 16) | ((b[o + 2] as number) << 8) | (b[o + 3] as number)) >>> 0;
}

interface SendStream {
  roc: number;
  lastSeq: number;
}

export class SrtpSendContext {
  private readonly s: Session;
  private readonly streams = new Map<number, SendStream>();
  private srtcpIndex = 0;

  constructor(suite: SrtpSuite, keySalt: Uint8Array) {
    this.s = new Session(suite, keySalt);
  }

  get suite(): SrtpSuite {
    return this.s.suite;
  }

  protectRtp(packet: Uint8Array): Buffer {
    const hl = rtpHeaderLength(packet);
    if (hl < 0) throw new RangeError('protectRtp: not an RTP v2 packet');
    const seq = ((packet[2] as number) << 8) | (packet[3] as number);
    const ssrc = u32(packet, 8);
    let st = this.streams.get(ssrc);
    if (st === undefined) {
      st = { roc: 0, lastSeq: seq };
      this.streams.set(ssrc, st);
    }
    const roc = estimateRoc(st.roc, st.lastSeq, seq);
    if (roc * 65536 + seq > st.roc * 65536 + st.lastSeq) {
      st.roc = roc;
      st.lastSeq = seq;
    }
    const n = packet.length;
    const out = Buffer.allocUnsafe(n + this.s.rtpTag);
    out.set(packet.subarray(0, hl), 0);
    this.s.crypt(false, ssrc, roc, seq, packet.subarray(hl), out, hl);
    const tag = this.s.mac(false, out.subarray(0, n), roc);
    tag.copy(out, n, 0, this.s.rtpTag);
    return out;
  }

  protectRtcp(packet: Uint8Array): Buffer {
    if (packet.length < 8 || (packet[0] as number) >> 6 !== 2) throw new RangeError('protectRtcp: not an RTCP v2 packet');
    const index = this.srtcpIndex;
    this.srtcpIndex = (index + 1) & 0x7fffffff;
    const n = packet.length;
    const out = Buffer.allocUnsafe(n + 4 + SRTCP_TAG_BYTES);
    out.set(packet.subarray(0, 8), 0);
    this.s.crypt(true, u32(packet, 4), index >>> 16, index & 0xffff, packet.subarray(8), out, 8);
    out.writeUInt32BE((0x80000000 | index) >>> 0, n);
    const tag = this.s.mac(true, out.subarray(0, n + 4), null);
    tag.copy(out, n + 4, 0, SRTCP_TAG_BYTES);
    return out;
  }

  snapshot(): SrtpSendState {
    const streams = [...this.streams].map(([ssrc, st]) => ({ ssrc, roc: st.roc, lastSeq: st.lastSeq }));
    return { suite: this.s.suite, keySalt: Uint8Array.from(this.s.keySalt), streams, srtcpIndex: this.srtcpIndex };
  }

  static restore(state: SrtpSendState): SrtpSendContext {
    const c = new SrtpSendContext(state.suite, state.keySalt);
    for (const st of state.streams) c.streams.set(st.ssrc >>> 0, { roc: st.roc >>> 0, lastSeq: st.lastSeq & 0xffff });
    c.srtcpIndex = state.srtcpIndex & 0x7fffffff;
    return c;
  }
}

export interface SrtpReceiveOptions {
  /** SSRCs with receive state, each for SRTP and SRTCP (default 32); a new one beyond it is 'ssrc-limit'. */
  maxSsrcs?: number;
  /** Replay window in packets (default 128, at most 32768). */
  replayWindow?: number;
}

export class SrtpReceiveContext {
  private readonly s: Session;
  readonly maxSsrcs: number;
  readonly replayWindow: number;
  private readonly rtp = new Map<number, ReplayWindow>();
  private readonly rtcp = new Map<number, ReplayWindow>();

  constructor(suite: SrtpSuite, keySalt: Uint8Array, opts: SrtpReceiveOptions = {}) {
    this.s = new Session(suite, keySalt);
    this.maxSsrcs = opts.maxSsrcs ?? DEFAULT_MAX_SSRCS;
    this.replayWindow = opts.replayWindow ?? DEFAULT_REPLAY_WINDOW;
    if (!Number.isInteger(this.maxSsrcs) || this.maxSsrcs < 1) throw new RangeError('maxSsrcs must be a positive integer');
    checkReplayWindowSize(this.replayWindow);
  }

  get suite(): SrtpSuite {
    return this.s.suite;
  }

  /** Number of SSRCs with SRTP / SRTCP receive state. */
  get ssrcCount(): { rtp: number; rtcp: number } {
    return { rtp: this.rtp.size, rtcp: this.rtcp.size };
  }

  unprotectRtp(packet: Uint8Array): Buffer | SrtpFailure {
    const tagLen = this.s.rtpTag;
    const hl = rtpHeaderLength(packet);
    const end = packet.length - tagLen;
    if (hl < 0 || end < hl) return 'malformed';
    const seq = ((packet[2] as number) << 8) | (packet[3] as number);
    const ssrc = u32(packet, 8);
    const win = this.rtp.get(ssrc);
    let roc = 0;
    if (win !== undefined) roc = estimateRoc(Math.floor(win.highest / 65536), win.highest % 65536, seq);
    const index = roc * 65536 + seq;

    const mac = this.s.mac(false, packet.subarray(0, end), roc);
    if (!timingSafeEqual(mac.subarray(0, tagLen), packet.subarray(end))) return 'auth';
    if (win === undefined) {
      if (this.rtp.size >= this.maxSsrcs) return 'ssrc-limit';
    } else {
      const v = win.check(index);
      if (v !== 'ok') return v;
    }

    const out = Buffer.allocUnsafe(end);
    out.set(packet.subarray(0, hl), 0);
    this.s.crypt(false, ssrc, roc, seq, packet.subarray(hl, end), out, hl);
    if (win === undefined) this.rtp.set(ssrc, new ReplayWindow(this.replayWindow, index));
    else win.accept(index);
    return out;
  }

  unprotectRtcp(packet: Uint8Array): Buffer | SrtpFailure {
    const n = packet.length;
    if (n < 8 + 4 + SRTCP_TAG_BYTES || (packet[0] as number) >> 6 !== 2) return 'malformed';
    const end = n - SRTCP_TAG_BYTES;
    const mac = this.s.mac(true, packet.subarray(0, end), null);
    if (!timingSafeEqual(mac.subarray(0, SRTCP_TAG_BYTES), packet.subarray(end))) return 'auth';

    const word = u32(packet, end - 4);
    const index = word & 0x7fffffff;
    const ssrc = u32(packet, 4);
    const win = this.rtcp.get(ssrc);
    if (win === undefined) {
      if (this.rtcp.size >= this.maxSsrcs) return 'ssrc-limit';
    } else {
      const v = win.check(index);
      if (v !== 'ok') return v;
    }

    const out = Buffer.allocUnsafe(end - 4);
    out.set(packet.subarray(0, 8), 0);
    const body = packet.subarray(8, end - 4);
    if (word >>> 31) this.s.crypt(true, ssrc, index >>> 16, index & 0xffff, body, out, 8);
    else out.set(body, 8);
    if (win === undefined) this.rtcp.set(ssrc, new ReplayWindow(this.replayWindow, index));
    else win.accept(index);
    return out;
  }

  /** Forgets all SRTP and SRTCP sequence and replay state (streams resumed after a reinvite). */
  resetReplay(): void {
    this.rtp.clear();
    this.rtcp.clear();
  }

  snapshot(): SrtpReceiveState {
    return {
      suite: this.s.suite,
      keySalt: Uint8Array.from(this.s.keySalt),
      maxSsrcs: this.maxSsrcs,
      replayWindow: this.replayWindow,
      rtp: [...this.rtp].map(([ssrc, w]) => ({ ssrc, roc: Math.floor(w.highest / 65536), highestSeq: w.highest % 65536, window: w.toWords() })),
      rtcp: [...this.rtcp].map(([ssrc, w]) => ({ ssrc, highestIndex: w.highest, window: w.toWords() })),
    };
  }

  static restore(state: SrtpReceiveState): SrtpReceiveContext {
    const c = new SrtpReceiveContext(state.suite, state.keySalt, { maxSsrcs: state.maxSsrcs, replayWindow: state.replayWindow });
    for (const r of state.rtp) c.rtp.set(r.ssrc >>> 0, ReplayWindow.fromWords(c.replayWindow, (r.roc >>> 0) * 65536 + (r.highestSeq & 0xffff), r.window));
    for (const r of state.rtcp) c.rtcp.set(r.ssrc >>> 0, ReplayWindow.fromWords(c.replayWindow, r.highestIndex & 0x7fffffff, r.window));
    return c;
  }
}
