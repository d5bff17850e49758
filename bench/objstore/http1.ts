/**
 * Two HTTP/1.1 transports for the load generator, behind one interface:
 *
 * - `lean` (default): a minimal keep-alive client on net.Socket that reads every response into one
 *   fixed buffer per connection (net's `onread` option: no allocation per read) and parses the
 *   status line, the headers and a Content-Length or chunked body itself. Measured here against a
 *   Node sink: GET of 64 MiB objects at ~2.5 GiB/s for 0.6 core.
 * - `node`: Node's http client with keep-alive agents. Its responses arrive as a fresh Buffer per
 *   read through a stream; measured the same way: ~600 MiB/s for a whole core, below the 1.2 GiB/s
 *   a single hostd GET stream must reach, so it cannot be the default.
 *
 * Both send request bodies straight from the caller's buffer (no copy) and hash response bodies
 * only when asked.
 */
import { createHash, type Hash } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import net from 'node:net';

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  bytes: number;
  /** MD5 (hex) of the body, when asked for */
  md5?: string;
  /** the start of the body of an error response */
  text: string;
}

export interface Transport {
  send(method: string, path: string, headers: Record<string, string>, body?: Buffer, hash?: boolean): Promise<Reply>;
  close(): void;
}

const TIMEOUT_MS = 300_000;
const ERR_TEXT = 2048;

// ---------------------------------------------------------------- node:http

export class NodeHttp implements Transport {
  private readonly agent: http.Agent;

  constructor(private readonly host: string, private readonly port: number) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 16, keepAliveMsecs: 10_000 });
  }

  send(method: string, path: string, headers: Record<string, string>, body?: Buffer, hash = false): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const req = http.request({ agent: this.agent, hostname: this.host, port: this.port, method, path, headers });
      req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error(`${method} ${path}: no progress for ${TIMEOUT_MS / 1000} s`)));
      req.on('error', reject);
      req.on('response', (res) => {
        let bytes = 0;
        let text = '';
        const ok = (res.statusCode ?? 0) < 300;
        const h = hash && ok ? createHash('md5') : null;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (h) h.update(chunk);
          else if (!ok && text.length < ERR_TEXT) text += chunk.toString('utf8');
        });
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes, text, ...(h ? { md5: h.digest('hex') } : {}) }));
      });
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

// ---------------------------------------------------------------- lean

interface Pending {
  method: string;
  path: string;
  resolve: (r: Reply) => void;
  reject: (e: Error) => void;
  hash: Hash | null;
  wantHash: boolean;
  /** bytes of the response seen so far (0 = the connection may be retried) */
  seen: number;
}

type BodyMode = 'length' | 'chunked' | 'eof' | 'none';

/** One kept-alive connection; one request at a time. */
class Conn {
  readonly sock: net.Socket;
  dead = false;
  private p: Pending | null = null;
  // response state
  private head = '';
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private mode: BodyMode | null = null;
  private left = 0;
  private bytes = 0;
  private text = '';
  private closeAfter = false;
  // chunked state: 'size' (reading the size line), 'data', 'crlf' (after data), 'trailer'
  private cstate: 'size' | 'data' | 'crlf' | 'trailer' = 'size';
  private line = '';

  constructor(host: string, port: number, buffer: Buffer, private readonly onIdle: (c: Conn) => void) {
    this.sock = net.connect({ host, port, noDelay: true, onread: { buffer, callback: (n: number, buf: Uint8Array) => this.onData(buf as Buffer, n) } } as net.NetConnectOpts);
    this.sock.setTimeout(TIMEOUT_MS, () => this.sock.destroy(new Error(`no response for ${TIMEOUT_MS / 1000} s`)));
    this.sock.on('error', (e) => this.fail(e));
    this.sock.on('close', () => {
      if (this.p && this.mode === 'eof') {
        this.dead = true;
        return this.finish();
      }
      this.fail(new Error('connection closed by the server'));
    });
  }

  send(p: Pending, head: string, body?: Buffer): void {
    this.p = p;
    this.head = '';
    this.mode = null;
    this.bytes = 0;
    this.text = '';
    this.headers = {};
    this.sock.cork();
    this.sock.write(head, 'latin1');
    if (body && body.length) this.sock.write(body);
    this.sock.uncork();
  }

  private fail(e: Error): void {
    this.dead = true;
    const p = this.p;
    this.p = null;
    if (p) p.reject(Object.assign(e, { retryable: p.seen === 0 }));
    this.sock.destroy();
  }

  private onData(buf: Buffer, n: number): boolean {
    const p = this.p;
    if (!p) {
      this.fail(new Error('data from the server with no request outstanding'));
      return false;
    }
    p.seen += n;
    let off = 0;
    if (this.mode === null) {
      // the head: accumulate until the blank line (it may span reads)
      const before = this.head.length;
      this.head += buf.toString('latin1', 0, n);
      const end = this.head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (this.head.length > 64 * 1024) this.fail(new Error('response head over 64 KiB'));
        return true;
      }
      off = end + 4 - before;
      if (!this.parseHead(this.head.slice(0, end))) return false;
      this.head = '';
    }
    this.body(buf, off, n);
    return true;
  }

  private parseHead(head: string): boolean {
    const lines = head.split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
    if (!m) {
      this.fail(new Error(`bad status line: ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`));
      return false;
    }
    this.status = Number(m[1]);
    for (let i = 1; i < lines.length; i++) {
      const l = lines[i]!;
      const c = l.indexOf(':');
      if (c <= 0) continue;
      const k = l.slice(0, c).trim().toLowerCase();
      const v = l.slice(c + 1).trim();
      const prev = this.headers[k];
      this.headers[k] = prev === undefined ? v : `${String(prev)}, ${v}`;
    }
    const te = String(this.headers['transfer-encoding'] ?? '').toLowerCase();
    const cl = this.headers['content-length'];
    this.closeAfter = /\bclose\b/i.test(String(this.headers.connection ?? '')) || /^HTTP\/1\.0/.test(lines[0]!);
    const p = this.p!;
    p.hash = p.wantHash && this.status < 300 ? createHash('md5') : null;
    if (p.method === 'HEAD' || this.status === 204 || this.status === 304) this.mode = 'none';
    else if (te.includes('chunked')) {
      this.mode = 'chunked';
      this.cstate = 'size';
      this.line = '';
    } else if (cl !== undefined) {
      this.mode = 'length';
      this.left = Number(cl);
    } else this.mode = 'eof';
    if (this.status >= 100 && this.status < 200) {
      // never asked for (no Expect: 100-continue is sent)
      this.fail(new Error(`unexpected interim response ${this.status}`));
      return false;
    }
    if (this.mode === 'none' || (this.mode === 'length' && this.left === 0)) this.finish();
    return true;
  }

  private take(buf: Buffer, a: number, b: number): void {
    if (b <= a) return;
    this.bytes += b - a;
    const p = this.p!;
    if (p.hash) p.hash.update(buf.subarray(a, b));
    else if (this.status >= 300 && this.text.length < ERR_TEXT) this.text += buf.toString('utf8', a, Math.min(b, a + ERR_TEXT));
  }

  private body(buf: Buffer, off: number, n: number): void {
    if (!this.p || this.mode === null || this.mode === 'none') {
      if (off < n && this.p === null) this.fail(new Error('bytes after the end of a response'));
      return;
    }
    if (this.mode === 'length') {
      const k = Math.min(this.left, n - off);
      this.take(buf, off, off + k);
      this.left -= k;
      if (this.left === 0) {
        if (off + k < n) return this.fail(new Error('bytes after the end of a response'));
        this.finish();
      }
      return;
    }
    if (this.mode === 'eof') return this.take(buf, off, n);
    // chunked
    let i = off;
    while (i < n && this.p) {
      if (this.cstate === 'data') {
        const k = Math.min(this.left, n - i);
        this.take(buf, i, i + k);
        this.left -= k;
        i += k;
        if (this.left === 0) {
          this.cstate = 'crlf';
          this.line = '';
        }
        continue;
      }
      // size line, the CRLF after a chunk, or trailer lines: read up to LF
      const lf = buf.indexOf(10, i);
      const end = lf < 0 || lf >= n ? n : lf;
      this.line += buf.toString('latin1', i, end);
      i = end;
      if (lf < 0 || lf >= n) break;
      i++;
      const line = this.line.replace(/\r$/, '');
      this.line = '';
      if (this.cstate === 'crlf') this.cstate = 'size';
      else if (this.cstate === 'size') {
        const size = parseInt(line, 16);
        if (!Number.isFinite(size)) return this.fail(new Error(`bad chunk size line ${JSON.stringify(line.slice(0, 40))}`));
        if (size === 0) this.cstate = 'trailer';
        else {
          this.left = size;
          this.cstate = 'data';
        }
      } else if (line === '') {
        this.finish();
        if (i < n) this.fail(new Error('bytes after the end of a response'));
        return;
      }
    }
  }

  private finish(): void {
    const p = this.p!;
    this.p = null;
    this.mode = null;
    const reply: Reply = { status: this.status, headers: this.headers, bytes: this.bytes, text: this.text, ...(p.hash ? { md5: p.hash.digest('hex') } : {}) };
    if (this.closeAfter) {
      this.dead = true;
      this.sock.destroy();
    } else this.onIdle(this);
    p.resolve(reply);
  }
}

export class LeanHttp implements Transport {
  private readonly idle: Conn[] = [];
  private readonly all = new Set<Conn>();

  constructor(private readonly host: string, private readonly port: number, private readonly readBuffer = 512 * 1024) {}

  private conn(): { c: Conn; reused: boolean } {
    while (this.idle.length) {
      const c = this.idle.pop()!;
      if (!c.dead && !c.sock.destroyed) return { c, reused: true };
      this.all.delete(c);
    }
    const c = new Conn(this.host, this.port, Buffer.allocUnsafeSlow(this.readBuffer), (x) => this.idle.push(x));
    this.all.add(c);
    return { c, reused: false };
  }

  async send(method: string, path: string, headers: Record<string, string>, body?: Buffer, hash = false): Promise<Reply> {
    let head = `${method} ${path} HTTP/1.1\r\n`;
    for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
    if (body === undefined && (method === 'PUT' || method === 'POST')) head += 'content-length: 0\r\n';
    head += '\r\n';
    for (let attempt = 0; ; attempt++) {
      const { c, reused } = this.conn();
      try {
        return await new Promise<Reply>((resolve, reject) => c.send({ method, path, resolve, reject, hash: null, wantHash: hash, seen: 0 }, head, body));
      } catch (err) {
        this.all.delete(c);
        // a kept-alive connection the server closed just before we wrote: once more on a new one
        if (reused && attempt === 0 && (err as { retryable?: boolean }).retryable) continue;
        throw new Error(`${method} ${path}: ${(err as Error).message}`);
      }
    }
  }

  close(): void {
    for (const c of this.all) c.sock.destroy();
    this.all.clear();
    this.idle.length = 0;
  }
}
