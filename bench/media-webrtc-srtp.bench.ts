/**
 * The SRTP of one WebRTC packet, werift's against the bridge's (actors/media-session/webrtc-srtp.ts),
 * in CPU µs per packet: the part of bench/media-webrtc.bench.ts's per-packet cost that moved.
 *
 *   node dist/bench/media-webrtc-srtp.bench.js [--packets 20000] [--payload 80] [--rounds 3]
 *
 * Per round and implementation: `--packets` RTP packets (Opus-sized payload, one SSRC,
 * consecutive sequence numbers across a wrap) protected as werift's sender hands them over
 * (payload + RtpHeader), then unprotected as werift's receive loop does (whole datagram); CPU
 * from process.cpuUsage over each loop, after a warm-up. werift's sessions are measured with the
 * profile it prefers (AEAD_AES_128_GCM, what two werift peers agree on) and with
 * AES_CM_128_HMAC_SHA1_80 (what the bridge now negotiates); the bridge's with AES-CM-80. In one
 * process, so a loaded machine slows all alike; rounds alternate the order. stdout: a table, the
 * medians, one JSON line {"bench":"media-webrtc-srtp",...}.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ProtectionProfileAeadAes128Gcm, ProtectionProfileAes128CmHmacSha1_80, RtpHeader, SrtcpSession, SrtpSession } from 'werift';
import { useBridgeSrtp } from '../actors/media-session/webrtc-srtp.js';
import { median } from './lib/stats.js';
import { renderTable } from './lib/table.js';

const { values: v } = parseArgs({
  options: {
    packets: { type: 'string', default: '20000' },
    payload: { type: 'string', default: '80' },
    rounds: { type: 'string', default: '3' },
  },
  strict: true,
});
const packets = Number(v.packets);
const payloadBytes = Number(v.payload);
const rounds = Number(v.rounds);
if (!(packets >= 1000) || !(payloadBytes >= 1) || !(rounds >= 1)) throw new Error('--packets >= 1000, --payload >= 1, --rounds >= 1');

type Session = { encrypt(p: Buffer, h: RtpHeader): Buffer; decrypt(b: Buffer): Buffer };
type Impl = 'werift GCM' | 'werift AES-CM-80' | 'bridge AES-CM-80';

/** A sender and a receiver session of one implementation, sharing keys. */
function pair(impl: Impl): { tx: Session; rx: Session } {
  const gcm = impl === 'werift GCM';
  const profile = gcm ? ProtectionProfileAeadAes128Gcm : ProtectionProfileAes128CmHmacSha1_80;
  const k = randomBytes(16), s = randomBytes(gcm ? 12 : 14), k2 = randomBytes(16), s2 = randomBytes(gcm ? 12 : 14);
  const a = { keys: { localMasterKey: k, localMasterSalt: s, remoteMasterKey: k2, remoteMasterSalt: s2 }, profile };
  const b = { keys: { localMasterKey: k2, localMasterSalt: s2, remoteMasterKey: k, remoteMasterSalt: s }, profile };
  if (impl !== 'bridge AES-CM-80') return { tx: new SrtpSession(a), rx: new SrtpSession(b) };
  const side = (config: typeof a) => {
    const t = { srtp: new SrtpSession(config) as unknown, srtcp: new SrtcpSession(config) as unknown, srtpProfiles: [profile] };
    if (!useBridgeSrtp(t, () => undefined)) throw new Error('webrtc-srtp.ts did not take the session');
    return t.srtp as Session;
  };
  return { tx: side(a), rx: side(b) };
}

function cpuUs(fn: () => void): number {
  const t = process.cpuUsage();
  fn();
  const u = process.cpuUsage(t);
  return u.user + u.system;
}

function measure(impl: Impl): { protect: number; unprotect: number } {
  const { tx, rx } = pair(impl);
  const payload = randomBytes(payloadBytes);
  const first = 0x10000 - packets / 2;
  const wire: Buffer[] = new Array(packets);
  const header = (i: number) => new RtpHeader({ payloadType: 111, sequenceNumber: (first + i) & 0xffff, timestamp: (i * 960) >>> 0, ssrc: 0x2badcafe });
  // Warm-up on its own keys' first packets (JIT, the cipher objects), then the measured loops.
  const warm = pair(impl);
  for (let i = 0; i < 2000; i++) warm.rx.decrypt(warm.tx.encrypt(payload, header(i)));
  const protect = cpuUs(() => {
    for (let i = 0; i < packets; i++) wire[i] = tx.encrypt(payload, header(i));
  });
  const unprotect = cpuUs(() => {
    for (let i = 0; i < packets; i++) rx.decrypt(wire[i]!);
  });
  return { protect: protect / packets, unprotect: unprotect / packets };
}

const IMPLS: Impl[] = ['werift GCM', 'werift AES-CM-80', 'bridge AES-CM-80'];
const rows: Array<{ impl: Impl; round: number; protect_us: number; unprotect_us: number }> = [];
for (let r = 1; r <= rounds; r++) {
  const order = r % 2 ? IMPLS : [...IMPLS].reverse();
  for (const impl of order) {
    const m = measure(impl);
    rows.push({ impl, round: r, protect_us: m.protect, unprotect_us: m.unprotect });
  }
}
const medians = IMPLS.map((impl) => {
  const of = rows.filter((x) => x.impl === impl);
  const p = median(of.map((x) => x.protect_us));
  const u = median(of.map((x) => x.unprotect_us));
  return { impl, protect_us: p, unprotect_us: u, both_us: p + u };
});
console.log(renderTable(['implementation', 'round', 'protect µs/packet', 'unprotect µs/packet'], rows.map((x) => [x.impl, String(x.round), x.protect_us, x.unprotect_us])));
console.log('');
console.log(renderTable(['medians', 'protect µs', 'unprotect µs', 'both µs'], medians.map((m) => [m.impl, m.protect_us, m.unprotect_us, m.both_us])));
const before = medians[0]!.both_us;
const after = medians[2]!.both_us;
// A transcoded WebRTC ↔ RTP call: the bridge unprotects 50 and protects 50 SRTP packets a second.
console.log(`\nper WebRTC call (50 packets each way a second): werift GCM ${(50 * before).toFixed(0)} µs/s, bridge ${(50 * after).toFixed(0)} µs/s of CPU`);
console.log(JSON.stringify({ bench: 'media-webrtc-srtp', packets, payload_bytes: payloadBytes, rounds, rows, medians }));
