/**
 * The SRTP and SRTCP of WebRTC endpoints, on the bridge's own SRTP code
 * (protocols/media/srtp) instead of werift's, keyed from the DTLS-SRTP keys werift derives.
 *
 * Why: werift (0.24.4) builds an AES cipher and an HMAC per packet, re-derives nothing but
 * allocates several buffers, and has no replay window. Measured (docs/media-bridge.md "Measured:
 * WebRTC ↔ RTP calls"): its encrypt/decrypt were ~10 % of the bridge's media threads in the
 * profiled bench, ~5 % on these contexts; a protect + unprotect pair ~19 µs (werift AEAD-GCM)
 * or ~25 µs (werift AES-CM) against ~14 µs here (bench/media-webrtc-srtp.bench.ts; one
 * long-lived AES-ECB keystream cipher per key, scratch buffers; node's createHmac per packet is
 * most of what is left).
 *
 * How, without touching node_modules: werift's RTCDtlsTransport keeps its sessions in its own
 * `srtp` and `srtcp` properties, assigns new ones at each DTLS (re)start (from
 * `dtls.extractSessionKeys`, in `SrtpSession.config.keys`) and only ever calls their
 * `encrypt`/`decrypt`. `useBridgeSrtp` turns those two properties into accessors: each session
 * werift assigns is replaced by one of the same shape whose work is done by an SrtpSendContext
 * (local keys) and an SrtpReceiveContext (remote keys). It also narrows the transport's offered
 * DTLS-SRTP profiles (`srtpProfiles`, read when the DTLS client or server starts) to
 * SRTP_AES128_CM_HMAC_SHA1_80, the one the bridge's code implements and every WebRTC peer must
 * (RFC 8827 §6.5); werift would otherwise prefer AEAD_AES_128_GCM.
 *
 * Decisions:
 * - A packet the receive context refuses makes `decrypt` throw werift's own
 *   `SrtpAuthenticationError`, the one error werift's receive loop catches and drops (any other
 *   would escape its UDP handler); what it was is reported first: 'auth' (tag did not verify:
 *   `srtpAuthFailures`), 'replay'/'too-old' (`srtpReplays`), 'malformed'/'ssrc-limit'.
 * - Receive order is the bridge's: authenticate, replay check, decrypt; replay window 1024
 *   packets per SSRC (werift had none: the endpoint kept its own window after werift's decrypt,
 *   now this is the one home of that check).
 * - Should a session arrive that is not AES-CM with keys in the known place (a werift release
 *   that changed shape, or a GCM session negotiated anyway), it is kept and wrapped instead:
 *   its tag failures are counted and its output goes through the same replay window; `bridge`
 *   in the returned mode says which (session.info shows it as `srtp_impl`).
 */
import { ProtectionProfileAes128CmHmacSha1_80, SrtpAuthenticationError, type RtpHeader } from 'werift';
import { SrtpReceiveContext, SrtpSendContext, type SrtpFailure } from '../../protocols/media/srtp/index.js';
import { ReplayWindow, estimateRoc } from '../../protocols/media/srtp/replay.js';
import { rtpHeaderLength } from '../../protocols/media/rtp.js';

/** Per SSRC, the packets remembered for the replay check (werift's default Chrome peer sends one SSRC). */
export const WEBRTC_REPLAY_WINDOW = 1024;

export type SrtpDrop = SrtpFailure;

/** The werift transport, as far as this file relies on it. */
interface DtlsLike {
  srtp?: unknown;
  srtcp?: unknown;
  srtpProfiles?: number[];
}

/** werift's SrtpSession/SrtcpSession, as far as this file relies on it. */
interface WeriftSession {
  config?: { keys?: { localMasterKey?: Buffer; localMasterSalt?: Buffer; remoteMasterKey?: Buffer; remoteMasterSalt?: Buffer }; profile?: number };
  encrypt(a: Buffer, b?: RtpHeader): Buffer;
  decrypt(data: Buffer): Buffer;
}

/** Which code protects an endpoint's media: the bridge's contexts, or werift's sessions (wrapped). */
export type SrtpImpl = 'bridge' | 'werift' | 'none';

const KEY_SALT_BYTES = 30;

/** The bridge's key‖salt (30 bytes) of one side, or null when werift's keys are not AES-CM's. */
function keySalt(key: Buffer | undefined, salt: Buffer | undefined): Uint8Array | null {
  if (!key || !salt || key.length + salt.length !== KEY_SALT_BYTES) return null;
  const ks = new Uint8Array(KEY_SALT_BYTES);
  ks.set(key, 0);
  ks.set(salt, key.length);
  return ks;
}

function refuse(drop: SrtpDrop, onDrop: (d: SrtpDrop) => void): never {
  onDrop(drop);
  throw new SrtpAuthenticationError(`SRTP packet dropped: ${drop}`);
}

/** werift's SrtpSession shape on SrtpSendContext/SrtpReceiveContext. */
class BridgeSrtpSession {
  constructor(
    private readonly tx: SrtpSendContext,
    private readonly rx: SrtpReceiveContext,
    private readonly onDrop: (d: SrtpDrop) => void,
  ) {}

  /** werift's sender gives the RTP header (its SSRC, PT, extensions set) and the payload. */
  encrypt(payload: Buffer, header: RtpHeader): Buffer {
    const h = header.serialize(header.serializeSize);
    const packet = Buffer.allocUnsafe(h.length + payload.length);
    h.copy(packet, 0);
    packet.set(payload, h.length);
    return this.tx.protectRtp(packet);
  }

  decrypt = (data: Buffer): Buffer => {
    const r = this.rx.unprotectRtp(data);
    return typeof r === 'string' ? refuse(r, this.onDrop) : r;
  };
}

/** werift's SrtcpSession shape on the same contexts. */
class BridgeSrtcpSession {
  constructor(
    private readonly tx: SrtpSendContext,
    private readonly rx: SrtpReceiveContext,
    private readonly onDrop: (d: SrtpDrop) => void,
  ) {}

  encrypt(rtcp: Buffer): Buffer {
    return this.tx.protectRtcp(rtcp);
  }

  decrypt = (data: Buffer): Buffer => {
    const r = this.rx.unprotectRtcp(data);
    return typeof r === 'string' ? refuse(r, this.onDrop) : r;
  };
}

/** The send and receive contexts of one werift session's keys, or null when they are not AES-CM's. */
function contextsOf(session: WeriftSession): { tx: SrtpSendContext; rx: SrtpReceiveContext } | null {
  const c = session.config;
  if (!c?.keys || c.profile !== ProtectionProfileAes128CmHmacSha1_80) return null;
  const local = keySalt(c.keys.localMasterKey, c.keys.localMasterSalt);
  const remote = keySalt(c.keys.remoteMasterKey, c.keys.remoteMasterSalt);
  if (!local || !remote) return null;
  return {
    tx: new SrtpSendContext('AES_CM_128_HMAC_SHA1_80', local),
    rx: new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_80', remote, { replayWindow: WEBRTC_REPLAY_WINDOW }),
  };
}

/**
 * The fallback: werift's own session, its tag failures counted (werift throws
 * SrtpAuthenticationError) and, for SRTP, its output put through a replay window.
 */
function wrapWerift(session: WeriftSession, rtp: boolean, onDrop: (d: SrtpDrop) => void): WeriftSession {
  const decrypt = session.decrypt.bind(session);
  const replay = new Map<number, ReplayWindow>();
  session.decrypt = (data: Buffer) => {
    let out: Buffer;
    try {
      out = decrypt(data);
    } catch (err) {
      if ((err as Error | undefined)?.name === 'SrtpAuthenticationError') onDrop('auth');
      throw err;
    }
    if (!rtp || rtpHeaderLength(out) < 0) return out;
    const seq = out.readUInt16BE(2);
    const ssrc = out.readUInt32BE(8);
    const win = replay.get(ssrc);
    if (!win) {
      replay.set(ssrc, new ReplayWindow(WEBRTC_REPLAY_WINDOW, seq));
      return out;
    }
    const index = estimateRoc(Math.floor(win.highest / 0x10000), win.highest % 0x10000, seq) * 0x10000 + seq;
    const v = win.check(index);
    if (v !== 'ok') refuse(v, onDrop);
    win.accept(index);
    return out;
  };
  return session;
}

const hooked = new WeakMap<object, () => SrtpImpl>();
const converted = new WeakSet<object>();

/**
 * Put `dtls`'s SRTP and SRTCP on the bridge's code (see the header), now and at each DTLS
 * (re)start; `onDrop` hears each packet refused on receive. Returns which code protects the
 * current sessions ('none' before DTLS has started), or null when werift's transport is not of
 * the known shape (then nothing is hooked; test/media/webrtc-srtp.test.ts fails on that).
 */
export function useBridgeSrtp(transport: object, onDrop: (d: SrtpDrop) => void): (() => SrtpImpl) | null {
  const dtls = transport as DtlsLike;
  const known = hooked.get(dtls);
  if (known) return known;
  const props = ['srtp', 'srtcp'] as const;
  const descriptors = props.map((p) => Object.getOwnPropertyDescriptor(dtls, p));
  if (descriptors.some((d) => !d || !d.configurable || !('value' in d)) || !Array.isArray(dtls.srtpProfiles)) return null;
  dtls.srtpProfiles = [ProtectionProfileAes128CmHmacSha1_80];
  let impl: SrtpImpl = 'none';
  // werift assigns srtp then srtcp from the same keys: one pair of contexts serves both.
  let pending: { keys: unknown; tx: SrtpSendContext; rx: SrtpReceiveContext } | null = null;
  const convert = (value: unknown, rtp: boolean): unknown => {
    const s = value as WeriftSession | undefined;
    if (!s || typeof s.decrypt !== 'function' || typeof s.encrypt !== 'function' || converted.has(s)) return value;
    const keys = s.config?.keys;
    const ctx = pending && pending.keys === keys ? pending : contextsOf(s);
    let next: object;
    if (ctx) {
      pending = { keys, tx: ctx.tx, rx: ctx.rx };
      next = rtp ? new BridgeSrtpSession(ctx.tx, ctx.rx, onDrop) : new BridgeSrtcpSession(ctx.tx, ctx.rx, onDrop);
      impl = 'bridge';
    } else {
      next = wrapWerift(s, rtp, onDrop);
      impl = 'werift';
    }
    converted.add(next);
    return next;
  };
  props.forEach((prop, i) => {
    let session = convert(descriptors[i]!.value, prop === 'srtp');
    Object.defineProperty(dtls, prop, {
      configurable: true,
      enumerable: true,
      get: () => session,
      set: (next: unknown) => {
        session = convert(next, prop === 'srtp');
      },
    });
  });
  const mode = () => impl;
  hooked.set(dtls, mode);
  return mode;
}
