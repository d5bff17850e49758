/**
 * The native packet path (native/rtp-fastpath): loader and typed wrapper.
 *
 * The addon owns UDP sockets on this thread's libuv loop, reads them with recvmmsg, sends with
 * sendmmsg (JS sends are queued and leave once per loop turn), and forwards the packets that
 * match a forwarding rule without entering JS (fast-rules.ts sets and clears the rules). Every
 * other packet comes to JS in one callback per loop turn, dispatched here to the socket's
 * receiver.
 *
 * Decisions:
 * - SRTP legs are forwarded natively too (keys and replay/ROC state set with the rule, see
 *   fast-rules.ts); SRTCP always comes to JS.
 * - Loaded once per thread (an N-API addon is loaded per worker-thread environment).
 * - `HOSTD_MEDIA_NATIVE=0` forces the dgram path (tests, comparison, a suspect addon). If the
 *   addon cannot be loaded (not built, wrong ABI), the bridge runs on dgram and a warning is
 *   emitted once per thread.
 * - Peer addresses come from C as bytes and are turned into the strings Node's dgram would
 *   give (`1.2.3.4`, `::ffff:1.2.3.4`, RFC 5952 IPv6), IPv4 ones through a small cache.
 */
import { loadAddon } from '../../runtime/native-addon.js';

/**
 * Indexes of the Float64Array that carries a rule's state between JS and C (the enum in
 * fastpath.h). The addon exports the name of every index (F_NAMES there): `layoutMismatch`
 * checks them all when it loads.
 */
export const F = {
  ssrc: 0, seq: 1, lastTs: 2, tsOffset: 3, outPackets: 4, outOctets: 5, expectSsrc: 6,
  baseSeq: 7, maxSeq: 8, cycles: 9, badSeq: 10, received: 11, transit: 12, jitter: 13, clock: 14,
  teIn: 15, teOut: 16,
  dPacketsIn: 17, dBytesIn: 18, dPacketsOut: 19, dBytesOut: 20, dMalformed: 21, lastAt: 22, dRestarts: 23, dForwarded: 24,
  // SRTP: the source's receive state for its SSRC (ROC and SEQ of the highest index, window
  // size, window bits as SrtpReceiveState's words), the destination's send ROC and last SEQ.
  inRoc: 25, inHighestSeq: 26, inWindow: 27, inW0: 28, outRoc: 32, outLastSeq: 33,
  dAuthFailures: 34, dReplays: 35,
} as const;
export const STATE_FIELDS = 36;
/** Window words carried (F.inW0 ..): the native replay window is at most 128 packets. */
export const NATIVE_WINDOW_WORDS = 4;

/** Layout of setRule's SRTP key block: tags, then per side AES key 16, salt 14, HMAC key 20. */
export const SRTP_KEYS = { inTag: 0, outTag: 1, in: 2, out: 52, bytes: 102 } as const;

/**
 * Why the addon's state layout is not this module's, or '' when it is: the field count, every
 * index of F by name, and the window words after F.inW0 (inW1 ..).
 */
export function layoutMismatch(names: readonly string[]): string {
  if (names.length !== STATE_FIELDS) return `addon state layout has ${names.length} fields, expected ${STATE_FIELDS}`;
  const expected = new Map<number, string>(Object.entries(F).map(([name, i]) => [i, name]));
  for (let w = 1; w < NATIVE_WINDOW_WORDS; w++) expected.set(F.inW0 + w, `inW${w}`);
  for (let i = 0; i < STATE_FIELDS; i++) {
    if (names[i] !== expected.get(i)) return `addon state field ${i} is ${names[i]}, expected ${expected.get(i) ?? 'none'}`;
  }
  return '';
}

export interface NativeFastPath {
  readonly STATE_FIELDS: number;
  /** The name of each state field, by index (fastpath.h's F_NAMES). */
  readonly STATE_FIELD_NAMES: readonly string[];
  /** Bind a UDP socket: a handle >= 0, or -errno. */
  open(family: 4 | 6, address: string, port: number): number;
  close(handle: number): void;
  connect(handle: number, address: string, port: number): number;
  disconnect(handle: number): void;
  /** Queue a datagram (address null: to the connected peer); 0 or -errno. */
  send(handle: number, data: Uint8Array, address: string | null, port: number): number;
  /** srtp: SRTP_KEYS layout (tag 0 on a plain side), or omitted/null for plain RTP both ways. */
  setRule(src: number, dest: number, state: Float64Array, toAddress: string, toPort: number, acceptAddress: string, acceptPort: number, ptMap: Int32Array, srtp?: Uint8Array | null): boolean;
  takeRule(src: number, out: Float64Array): boolean;
  readRule(src: number, out: Float64Array): boolean;
  /** [send errors, truncated datagrams] of a socket. */
  errors(handle: number): [number, number];
  onPackets(fn: (data: Buffer, meta: Uint32Array, count: number) => void): void;
}

export type NativeReceiver = (data: Buffer, address: string, port: number) => void;

const META_WORDS = 9;
const receivers: (NativeReceiver | undefined)[] = [];
let addon: NativeFastPath | null | undefined;

/** Why the addon is not in use ('' when it is). */
export let nativeUnavailable = '';

/** The addon for this thread, or null (forced off, or it cannot load). */
export function fastpath(): NativeFastPath | null {
  if (addon !== undefined) return addon;
  const load = loadAddon<NativeFastPath>({
    file: new URL('../../../native/rtp-fastpath/build/Release/rtp_fastpath.node', import.meta.url),
    offEnv: 'HOSTD_MEDIA_NATIVE',
    build: 'npm run build:native',
    check: (loaded) => {
      const names = loaded.STATE_FIELD_NAMES as readonly string[] | undefined;
      return !names ? 'the addon names no state fields (STATE_FIELD_NAMES)' : loaded.STATE_FIELDS !== STATE_FIELDS ? `addon state layout has ${loaded.STATE_FIELDS} fields, expected ${STATE_FIELDS}` : layoutMismatch(names);
    },
    ready: (loaded) => loaded.onPackets(dispatch),
    warning: (why) => `media bridge: the native packet path (native/rtp-fastpath) is not available, using dgram: ${why}`,
    warningType: 'HostdMediaWarning',
  });
  nativeUnavailable = load.unavailable;
  return (addon = load.addon);
}

export function setReceiver(handle: number, fn: NativeReceiver | undefined): void {
  receivers[handle] = fn;
}

function dispatch(data: Buffer, meta: Uint32Array, count: number): void {
  for (let i = 0; i < count; i++) {
    const m = i * META_WORDS;
    const fn = receivers[meta[m]!];
    if (!fn) continue;
    const off = meta[m + 1]!;
    const address = meta[m + 4] === 4 ? v4(meta[m + 5]!) : v6(meta, m + 5);
    fn(data.subarray(off, off + meta[m + 2]!), address, meta[m + 3]!);
  }
}

const v4cache = new Map<number, string>();
/** An IPv4 address copied from a struct in_addr into a (little-endian) u32. */
function v4(word: number): string {
  let s = v4cache.get(word);
  if (s === undefined) {
    s = `${word & 0xff}.${(word >>> 8) & 0xff}.${(word >>> 16) & 0xff}.${word >>> 24}`;
    if (v4cache.size > 4096) v4cache.clear();
    v4cache.set(word, s);
  }
  return s;
}

/** An IPv6 address as Node prints it (RFC 5952; v4-mapped as ::ffff:a.b.c.d). */
export function v6(meta: Uint32Array, at: number): string {
  const b = new Uint8Array(meta.buffer, meta.byteOffset + at * 4, 16);
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((b[i]! << 8) | b[i + 1]!);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) return `::ffff:${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}
