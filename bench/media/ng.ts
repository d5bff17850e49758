/**
 * rtpengine's ng control protocol over UDP: bencode and a client with cookies and retries.
 * Copied from the rtpengine peer recipe `shared/peers/rtpengine/rtp-load.mjs` (typed here).
 * Each client uses a random cookie prefix: rtpengine caches replies by cookie, so one must
 * never be reused across runs.
 */
import crypto from 'node:crypto';
import dgram from 'node:dgram';

export type BValue = number | string | Buffer | BValue[] | { [k: string]: BValue };
export type BDict = { [k: string]: BValue };

export function bencode(v: BValue): Buffer {
  const parts: Buffer[] = [];
  const e = (x: BValue): void => {
    if (typeof x === 'number') parts.push(Buffer.from(`i${Math.trunc(x)}e`));
    else if (typeof x === 'string' || Buffer.isBuffer(x)) {
      const b = Buffer.isBuffer(x) ? x : Buffer.from(x);
      parts.push(Buffer.from(`${b.length}:`), b);
    } else if (Array.isArray(x)) {
      parts.push(Buffer.from('l'));
      x.forEach(e);
      parts.push(Buffer.from('e'));
    } else {
      parts.push(Buffer.from('d'));
      for (const k of Object.keys(x).sort()) {
        e(k);
        e(x[k]!);
      }
      parts.push(Buffer.from('e'));
    }
  };
  e(v);
  return Buffer.concat(parts);
}

/** Decode bencode; byte strings come back as UTF-8 strings (ng replies are text). */
export function bdecode(buf: Buffer): BValue {
  let p = 0;
  const d = (): BValue => {
    const c = buf[p];
    if (c === undefined) throw new Error('bencode: truncated');
    if (c === 0x69) {
      const e = buf.indexOf(0x65, p);
      const n = Number(buf.toString('latin1', p + 1, e));
      p = e + 1;
      return n;
    }
    if (c === 0x6c) {
      p++;
      const l: BValue[] = [];
      while (buf[p] !== 0x65) l.push(d());
      p++;
      return l;
    }
    if (c === 0x64) {
      p++;
      const o: BDict = {};
      while (buf[p] !== 0x65) {
        const k = String(d());
        o[k] = d();
      }
      p++;
      return o;
    }
    const col = buf.indexOf(0x3a, p);
    if (col < 0) throw new Error('bencode: bad string');
    const len = Number(buf.toString('latin1', p, col));
    const s = buf.toString('utf8', col + 1, col + 1 + len);
    p = col + 1 + len;
    return s;
  };
  return d();
}

export class NgClient {
  private pending = new Map<string, { resolve: (v: BDict) => void; timer: NodeJS.Timeout | null }>();
  private seq = 0;
  private readonly prefix = crypto.randomBytes(6).toString('hex');
  private readonly sock = dgram.createSocket('udp4');

  constructor(private readonly host: string, private readonly port: number) {
    this.sock.on('message', (m) => {
      const sp = m.indexOf(0x20);
      const cookie = m.toString('latin1', 0, sp);
      const p = this.pending.get(cookie);
      if (!p) return;
      this.pending.delete(cookie);
      if (p.timer) clearTimeout(p.timer);
      p.resolve(bdecode(m.subarray(sp + 1)) as BDict);
    });
  }

  async ready(): Promise<void> {
    await new Promise<void>((r) => this.sock.bind(0, '127.0.0.1', () => r()));
  }

  /** One request; resent every second, up to `tries` times. */
  req(dict: BDict, tries = 5): Promise<BDict> {
    const cookie = `${this.prefix}_${++this.seq}`;
    const msg = Buffer.concat([Buffer.from(cookie + ' '), bencode(dict)]);
    return new Promise((resolve, reject) => {
      let n = 0;
      const send = (): void => {
        const p = this.pending.get(cookie);
        if (!p) return;
        if (n++ >= tries) {
          this.pending.delete(cookie);
          reject(new Error(`ng timeout: ${String(dict.command)}`));
          return;
        }
        this.sock.send(msg, this.port, this.host);
        p.timer = setTimeout(send, 1000);
      };
      this.pending.set(cookie, { resolve, timer: null });
      send();
    });
  }

  close(): void {
    for (const p of this.pending.values()) if (p.timer) clearTimeout(p.timer);
    this.pending.clear();
    this.sock.close();
  }
}
