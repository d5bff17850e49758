/**
 * The UDP sockets of an RTP endpoint: an even RTP port and the odd RTCP port after it, bound
 * in the configured range. A socket cannot move between worker threads, so a pair stays on
 * the thread that opened it; `shelf` is that thread's table of pairs by endpoint id, through
 * which a session on the same thread adopts a transferred endpoint's sockets directly.
 */
import dgram from 'node:dgram';

export type PacketHandler = (data: Buffer, address: string, port: number, rtcp: boolean) => void;

export class SocketPair {
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
  static async open(bindAddress: string, family: 'IP4' | 'IP6', min: number, max: number): Promise<SocketPair> {
    const type = family === 'IP6' ? 'udp6' : 'udp4';
    const first = min % 2 === 0 ? min : min + 1;
    // Pairs (p, p + 1) with p even and p + 1 <= max.
    const pairs = max > first ? Math.floor((max - first - 1) / 2) + 1 : 0;
    if (pairs < 1) throw new Error(`RTP port range ${min}-${max} holds no even/odd pair`);
    const start = Math.floor(Math.random() * pairs);
    for (let i = 0; i < Math.min(pairs, 64); i++) {
      const port = first + ((start + i) % pairs) * 2;
      const rtp = dgram.createSocket({ type, recvBufferSize: 1 << 20, sendBufferSize: 1 << 20 });
      const rtcp = dgram.createSocket({ type });
      try {
        await bind(rtp, bindAddress, port);
        await bind(rtcp, bindAddress, port + 1);
        return new SocketPair(rtp, rtcp, port);
      } catch {
        rtp.close();
        rtcp.close();
      }
    }
    throw new Error(`no free RTP port pair in ${min}-${max}`);
  }

  send(data: Uint8Array, address: string, port: number, rtcp: boolean): void {
    if (this.closed) return;
    (rtcp ? this.rtcp : this.rtp).send(data, port, address, this.afterSend);
    this.sent++;
  }

  /** One callback for every send (no closure per packet). */
  private readonly afterSend = (err: Error | null): void => {
    if (err) this.sendErrors++;
  };

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
