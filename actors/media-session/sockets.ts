/**
 * Opening an RTP endpoint's sockets (socket-pair.ts is their face), and Node's dgram
 * implementation of them. A socket cannot move between worker threads, so a pair stays on
 * the thread that opened it; `shelf` is that thread's table of pairs by endpoint id, through
 * which a session on the same thread adopts a transferred endpoint's sockets directly.
 */
import dgram from 'node:dgram';
import { fastpath } from './fastpath.js';
import { NativeSocketPair } from './native-sockets.js';
import { candidatePorts, type PacketHandler, type SocketPair } from './socket-pair.js';

/** Bind a pair at a random even port of [min, max]: native when the addon is available, else dgram. */
export function openSocketPair(bindAddress: string, family: 'IP4' | 'IP6', min: number, max: number): Promise<SocketPair> {
  const native = fastpath();
  if (native) return Promise.resolve(NativeSocketPair.open(native, bindAddress, family, min, max));
  return DgramSocketPair.open(bindAddress, family, min, max);
}

export class DgramSocketPair implements SocketPair {
  readonly native = null;
  onPacket: PacketHandler = () => undefined;
  closed = false;
  sent = 0;
  sendErrors = 0;

  private constructor(
    readonly rtp: dgram.Socket,
    readonly rtcp: dgram.Socket,
    readonly port: number,
  ) {
    rtp.on('message', (msg, rinfo) => this.onPacket(msg, rinfo.address, rinfo.port, false));
    rtcp.on('message', (msg, rinfo) => this.onPacket(msg, rinfo.address, rinfo.port, true));
    // A send to an unreachable peer surfaces as an 'error' on the socket: count it, never crash.
    rtp.on('error', () => this.sendErrors++);
    rtcp.on('error', () => this.sendErrors++);
  }

  get rtcpPort(): number {
    return this.port + 1;
  }

  /** Bind a pair at a random even port of [min, max]; tries other ports while they are taken. */
  static async open(bindAddress: string, family: 'IP4' | 'IP6', min: number, max: number): Promise<DgramSocketPair> {
    const type = family === 'IP6' ? 'udp6' : 'udp4';
    for (const port of candidatePorts(min, max)) {
      const rtp = dgram.createSocket({ type, recvBufferSize: 1 << 20, sendBufferSize: 1 << 20 });
      const rtcp = dgram.createSocket({ type });
      try {
        await bind(rtp, bindAddress, port);
        await bind(rtcp, bindAddress, port + 1);
        return new DgramSocketPair(rtp, rtcp, port);
      } catch {
        rtp.close();
        rtcp.close();
      }
    }
    throw new Error(`no free RTP port pair in ${min}-${max}`);
  }

  /** Where the RTP socket is connected (its sends then name no address), or null. */
  private peer: { address: string; port: number } | null = null;

  get connected(): boolean {
    return this.peer !== null;
  }

  connectRtp(address: string, port: number): void {
    if (this.closed || this.peer) return;
    this.peer = { address, port };
    this.rtp.connect(port, address);
  }

  disconnectRtp(): void {
    if (!this.peer) return;
    this.peer = null;
    try {
      this.rtp.disconnect();
    } catch {
      // still connecting: the connect completes, and the next send disconnects it
    }
  }

  send(data: Uint8Array, address: string, port: number, rtcp: boolean): void {
    if (this.closed) return;
    if (!rtcp && this.peer) {
      if (this.peer.port === port && this.peer.address === address) {
        try {
          this.rtp.send(data);
          this.sent++;
          return;
        } catch {
          // connect still in progress: fall through to an addressed send below
        }
      } else this.disconnectRtp();
    }
    // No callback: with one, Node defers it with a nextTick even when the send completed at
    // once. An asynchronous failure still reaches the socket's 'error' handler (counted).
    const socket = rtcp ? this.rtcp : this.rtp;
    try {
      socket.send(data, port, address);
    } catch (err) {
      // A connect that completed after we let go of the peer: undo it and send addressed.
      if ((err as NodeJS.ErrnoException).code !== 'ERR_SOCKET_DGRAM_IS_CONNECTED') throw err;
      socket.disconnect();
      socket.send(data, port, address);
    }
    this.sent++;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.rtp.close();
    this.rtcp.close();
  }
}

function bind(socket: dgram.Socket, address: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    socket.once('error', onError);
    socket.bind({ port, address, exclusive: true }, () => {
      socket.off('error', onError);
      resolve();
    });
  });
}

/** This thread's sockets, by endpoint id (module state: one table per worker thread). */
export const shelf = new Map<string, SocketPair>();
