/**
 * A light HTTP load generator for object stores: keep-alive connections (http1.ts), bodies sent
 * straight from preallocated in-memory buffers (no file reads, no copies), responses counted as
 * they stream in and only hashed when a sample is checked.
 */
import { createHash, randomFillSync } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { LeanHttp, NodeHttp, type Reply, type Transport } from './http1.js';
import { encodePath, type SigV4Signer } from './sigv4.js';


/** Where objects go and how that server is spoken to. */
export interface Endpoint {
  key: 'ceph' | 'hostd' | 'ceiling';
  label: string;
  /** base URL; objects live at base/bucket/name */
  url: URL;
  bucket: string;
  /** S3 buckets must be created first (PUT /bucket); hostd's buckets are implicit */
  createsBucket: boolean;
  /** S3 servers: every request signed (SigV4, UNSIGNED-PAYLOAD) */
  signer?: SigV4Signer;
  /** hostd: send Content-MD5 (hex) with every PUT */
  sendContentMd5: boolean;
  /** the object's MD5 (hex) as the server reports it in PUT and GET responses */
  md5Of(headers: IncomingHttpHeaders): string | undefined;
  /** status codes of a successful PUT */
  putOk: readonly number[];
  /** false for the sink, which keeps sizes but not bytes */
  verifyContent: boolean;
  /** PIDs of the server's processes, for its CPU use (may be empty) */
  pids(): number[];
}

/** One object of the run: which corpus body it carries. */
export interface Obj {
  name: string;
  kind: 'big' | 'small';
  variant: number;
}

/**
 * The bodies: one random buffer per size class, and objects as views into it at different offsets
 * (distinct content per variant, MD5s computed once before any timing).
 */
export class Corpus {
  private readonly pools: Record<Obj['kind'], Buffer>;
  private readonly md5s: Record<Obj['kind'], string[]>;
  readonly sizes: Record<Obj['kind'], number>;
  private readonly steps: Record<Obj['kind'], number>;

  constructor(bigBytes: number, bigVariants: number, smallBytes: number, smallVariants: number) {
    this.sizes = { big: bigBytes, small: smallBytes };
    this.steps = { big: 4096, small: 64 };
    this.pools = {
      big: randomFillSync(Buffer.allocUnsafeSlow(bigBytes + bigVariants * this.steps.big)),
      small: randomFillSync(Buffer.allocUnsafeSlow(smallBytes + smallVariants * this.steps.small)),
    };
    this.md5s = { big: [], small: [] };
    for (const kind of ['big', 'small'] as const) {
      const n = kind === 'big' ? bigVariants : smallVariants;
      for (let v = 0; v < n; v++) this.md5s[kind].push(createHash('md5').update(this.body({ name: '', kind, variant: v })).digest('hex'));
    }
  }

  variants(kind: Obj['kind']): number {
    return this.md5s[kind].length;
  }

  body(o: Obj): Buffer {
    const off = o.variant * this.steps[o.kind];
    return this.pools[o.kind].subarray(off, off + this.sizes[o.kind]);
  }

  md5(o: Obj): string {
    return this.md5s[o.kind][o.variant]!;
  }
}

export type TransportKind = 'lean' | 'node';

export class Client {
  private readonly transport: Transport;

  constructor(readonly ep: Endpoint, readonly corpus: Corpus, kind: TransportKind = 'lean') {
    const port = Number(ep.url.port || 80);
    this.transport = kind === 'lean' ? new LeanHttp(ep.url.hostname, port) : new NodeHttp(ep.url.hostname, port);
  }

  private path(name: string | null): string {
    const base = this.ep.url.pathname.replace(/\/+$/, '');
    return encodePath(`${base}/${this.ep.bucket}${name === null ? '' : `/${name}`}`);
  }

  request(method: string, name: string | null, body?: Buffer, extra: Record<string, string> = {}, hash = false): Promise<Reply> {
    const path = this.path(name);
    const headers: Record<string, string> = { host: this.ep.url.host, ...extra };
    if (body) headers['content-length'] = String(body.length);
    if (this.ep.signer) this.ep.signer.sign(method, path, '', headers);
    return this.transport.send(method, path, headers, body, hash);
  }

  async createBucket(): Promise<void> {
    const r = await this.request('PUT', null, Buffer.alloc(0));
    if (r.status !== 200 && r.status !== 409) throw new Error(`${this.ep.label}: create bucket ${this.ep.bucket}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
  }

  /** PUT one object; checks the status and the MD5 the server reports. */
  async put(o: Obj): Promise<void> {
    const body = this.corpus.body(o);
    const extra: Record<string, string> = { 'content-type': 'application/octet-stream' };
    if (this.ep.sendContentMd5) extra['content-md5'] = this.corpus.md5(o);
    const r = await this.request('PUT', o.name, body, extra);
    if (!this.ep.putOk.includes(r.status)) throw new Error(`${this.ep.label}: PUT ${o.name}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
    const md5 = this.ep.md5Of(r.headers);
    if (md5 !== undefined && md5 !== this.corpus.md5(o)) throw new Error(`${this.ep.label}: PUT ${o.name}: server reports MD5 ${md5}, the body's is ${this.corpus.md5(o)}`);
  }

  /** GET one object; checks status, size and reported MD5, and with `hash` the MD5 of the bytes. */
  async get(o: Obj, hash = false): Promise<void> {
    const r = await this.request('GET', o.name, undefined, {}, hash);
    if (r.status !== 200) throw new Error(`${this.ep.label}: GET ${o.name}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
    const want = this.corpus.sizes[o.kind];
    if (r.bytes !== want) throw new Error(`${this.ep.label}: GET ${o.name}: ${r.bytes} bytes, want ${want}`);
    const md5 = this.ep.md5Of(r.headers);
    if (md5 !== undefined && md5 !== this.corpus.md5(o)) throw new Error(`${this.ep.label}: GET ${o.name}: server reports MD5 ${md5}, want ${this.corpus.md5(o)}`);
    if (hash && r.md5 !== this.corpus.md5(o)) throw new Error(`${this.ep.label}: GET ${o.name}: content MD5 ${r.md5}, want ${this.corpus.md5(o)}: the bytes differ`);
  }

  async del(o: Obj): Promise<boolean> {
    const r = await this.request('DELETE', o.name);
    return r.status < 300 || r.status === 404;
  }

  close(): void {
    this.transport.close();
  }
}

