/**
 * The SIP server's sockets: one UDP socket and one TCP listener on the same port, TCP framing
 * by Content-Length (protocols/sip frameStream), connections kept by remote address so
 * responses reuse them (RFC 3261 §18.2.2), and the bounds that keep memory finite: the
 * largest message, the number of connections, an idle limit per connection.
 *
 * Decisions:
 * - Port 0 picks a port free for UDP, then binds TCP on the same number (retried a few times).
 * - A TCP framing error (no Content-Length, oversize) cannot be resynchronised: the core is
 *   told (it answers 400/513 if it can) and the connection is closed.
 * - To send over TCP to an address with no open connection, a new connection is made (and
 *   kept, and read from like any other).
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { frameStream } from '../../protocols/sip/index.js';
import type { SipSource } from './gateway-messages.js';

export interface TransportOptions {
  host: string;
  port: number;
  maxMessageBytes: number;
  maxConnections: number;
  tcpIdleMs: number;
}

export interface TransportEvents {
  message(bytes: Buffer, source: SipSource): void;
  /** A TCP stream that cannot be framed; `bytes` is what was buffered. The connection closes after. */
  framingError(bytes: Buffer, source: SipSource, reason: string): void;
}

const key = (address: string, port: number) => `${address}|${port}`;

export class Transport {
  private readonly conns = new Map<string, net.Socket>();

  /** The port UDP and TCP listen on (read once: every response's Contact asks for it, and address() is a system call). */
  readonly port: number;

  private constructor(
    private readonly o: TransportOptions,
    private readonly udp: dgram.Socket,
    private readonly tcp: net.Server,
    private readonly events: TransportEvents,
  ) {
    this.port = udp.address().port;
  }

  static async open(o: TransportOptions, events: TransportEvents): Promise<Transport> {
    const type = net.isIPv6(o.host) ? 'udp6' : 'udp4';
    for (let attempt = 0; ; attempt++) {
      const udp = dgram.createSocket({ type, recvBufferSize: 4 * 1024 * 1024 });
      await new Promise<void>((resolve, reject) => {
        udp.once('error', reject);
        udp.bind(o.port, o.host, () => {
          udp.off('error', reject);
          resolve();
        });
      });
      const port = udp.address().port;
      const tcp = net.createServer();
      tcp.maxConnections = o.maxConnections;
      try {
        await new Promise<void>((resolve, reject) => {
          tcp.once('error', reject);
          tcp.listen(port, o.host, () => {
            tcp.off('error', reject);
            resolve();
          });
        });
      } catch (err) {
        udp.close();
        if (o.port === 0 && attempt < 5 && (err as NodeJS.ErrnoException).code === 'EADDRINUSE') continue;
        throw err;
      }
      const t = new Transport(o, udp, tcp, events);
      udp.on('message', (msg, rinfo) => t.events.message(msg, { protocol: 'udp', address: rinfo.address, port: rinfo.port }));
      udp.on('error', () => undefined);
      tcp.on('connection', (s) => t.adopt(s));
      return t;
    }
  }

  get connections(): number {
    return this.conns.size;
  }

  /** Whether a TCP connection to address:port is open. */
  hasConnection(address: string, port: number): boolean {
    const s = this.conns.get(key(address, port));
    return s !== undefined && !s.destroyed;
  }

  /**
   * Never throws: a bad address or port (e.g. a Via port 0) is a message that cannot be sent.
   * No completion callback: without one libuv tries the send at once (uv_udp_try_send) instead
   * of queueing it for a later turn of the loop; a failure is the socket's 'error' event,
   * ignored like a lost datagram.
   */
  sendUdp(bytes: Buffer, address: string, port: number): void {
    try {
      this.udp.send(bytes, port, address);
    } catch {
      /* unreachable peer: dropped, as a lost datagram */
    }
  }

  /** Write on the connection to address:port, opening one when there is none. */
  sendTcp(bytes: Buffer, address: string, port: number): void {
    let s = this.conns.get(key(address, port));
    if (!s || s.destroyed) {
      if (this.conns.size >= this.o.maxConnections || port <= 0 || port > 65535) return;
      s = net.connect({ host: address, port });
      this.adopt(s, address, port);
    }
    s.write(bytes);
  }

  close(): Promise<void> {
    for (const s of this.conns.values()) s.destroy();
    this.conns.clear();
    this.udp.close();
    return new Promise((resolve) => this.tcp.close(() => resolve()));
  }

  private adopt(s: net.Socket, address = s.remoteAddress ?? '', port = s.remotePort ?? 0): void {
    const k = key(address, port);
    const source: SipSource = { protocol: 'tcp', address, port };
    this.conns.set(k, s);
    s.setNoDelay(true);
    s.setTimeout(this.o.tcpIdleMs, () => s.destroy());
    let buf = Buffer.alloc(0);
    s.on('data', (chunk) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      for (;;) {
        const f = frameStream(buf, this.o.maxMessageBytes);
        if (f.kind === 'incomplete') return;
        if (f.kind === 'keepalive') {
          if (f.ping) s.write('\r\n');
          buf = buf.subarray(f.skip);
          continue;
        }
        if (f.kind === 'error') {
          this.events.framingError(buf.subarray(0, this.o.maxMessageBytes), source, f.reason);
          buf = Buffer.alloc(0);
          s.end();
          return;
        }
        const msg = buf.subarray(f.skip, f.skip + f.length);
        buf = buf.subarray(f.skip + f.length);
        this.events.message(msg, source);
      }
    });
    s.on('error', () => undefined);
    s.on('close', () => {
      if (this.conns.get(k) === s) this.conns.delete(k);
    });
  }
}
