/**
 * The face of an RTP endpoint's UDP sockets: an even RTP port and the odd RTCP port after it,
 * bound in the configured range. Two implementations: `DgramSocketPair` (sockets.ts, Node's
 * dgram) and `NativeSocketPair` (native-sockets.ts, sockets owned by the native packet path,
 * which can also forward without JS); `openSocketPair` (sockets.ts) picks.
 */
import type { NativeFastPath } from './fastpath.js';

export type PacketHandler = (data: Buffer, address: string, port: number, rtcp: boolean) => void;

export interface SocketPair {
  readonly port: number;
  readonly rtcpPort: number;
  /** The native handles (fast-rules.ts sets forwarding rules on the RTP socket), or null on dgram. */
  readonly native: { addon: NativeFastPath; rtp: number; rtcp: number } | null;
  /** Where received datagrams go (the endpoint, a transfer's hold, or a relay). */
  onPacket: PacketHandler;
  readonly closed: boolean;
  /** Whether the RTP socket is connected to the peer. */
  readonly connected: boolean;
  /**
   * Connect the RTP socket to the peer. Once connected, the kernel delivers only that peer's
   * datagrams to it: the endpoint does this only for a peer that sends from the address and
   * port it announced (and never under the `latch` policy).
   */
  connectRtp(address: string, port: number): void;
  /** Back to an unconnected socket (the peer moved: reinvite, relay to another address). */
  disconnectRtp(): void;
  send(data: Uint8Array, address: string, port: number, rtcp: boolean): void;
  /** Close both sockets, once; the ports are free again. */
  close(): void;
}

/** Even ports p of [min, max] with p + 1 <= max, starting at a random one (at most 64 tried). */
export function* candidatePorts(min: number, max: number): Generator<number> {
  const first = min % 2 === 0 ? min : min + 1;
  const pairs = max > first ? Math.floor((max - first - 1) / 2) + 1 : 0;
  if (pairs < 1) throw new Error(`RTP port range ${min}-${max} holds no even/odd pair`);
  const start = Math.floor(Math.random() * pairs);
  for (let i = 0; i < Math.min(pairs, 64); i++) yield first + ((start + i) % pairs) * 2;
}
