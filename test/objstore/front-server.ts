/**
 * The object store's port-80 server (actors/objstore/http/server.ts) for the front's tests, on
 * an ephemeral loopback port with the store's handlers and no store behind them (the answers
 * these tests look at need none), and `exchange`: exact bytes over a raw TCP socket, for what
 * fetch and curl cannot send (pipelining, duplicate headers, HTTP/1.0, bad bytes).
 */
import { connect } from 'node:net';
import type { Server } from 'node:http';
import { handleManage } from '../../actors/objstore/http/manage.js';
import { handleObject } from '../../actors/objstore/http/objects.js';
import { closeFront, createFront, listenFront, type FrontHandler, type FrontOptions } from '../../actors/objstore/http/server.js';

export const FRONT_DEFAULTS: FrontOptions = { maxHeaderBytes: 16 * 1024, headersTimeoutMs: 2000, keepAliveTimeoutMs: 5000, bodyIdleTimeoutMs: 2000 };

/** The store's routes with nothing behind: what needs no store is answered, the rest would throw. */
export const storeless: FrontHandler = (r, url, query) => {
  const nothing = {} as never;
  if (url.startsWith('/$/')) handleManage(nothing, nothing, nothing, r, url, query);
  else handleObject(nothing, r, url, query);
};

/** A front on an ephemeral loopback port; close it in the test's teardown. */
export async function startFront(handle: FrontHandler = storeless, opts: Partial<FrontOptions> = {}): Promise<{ server: Server; port: number; close(): void }> {
  const server = createFront(handle, { ...FRONT_DEFAULTS, ...opts });
  const port = await listenFront(server, '127.0.0.1', 0);
  return { server, port, close: () => closeFront(server) };
}

/**
 * Send `bytes` (pieces sent `gapMs` apart when a list), collect what comes back until the server
 * closes or `quietMs` pass with nothing more (`ms` in all at most). `closed` tells whether the
 * server closed the connection.
 */
export function exchange(port: number, bytes: Buffer | string | Array<Buffer | string>, opts: { ms?: number; quietMs?: number; gapMs?: number } = {}): Promise<{ text: string; closed: boolean; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    const got: Buffer[] = [];
    let closed = true;
    const quiet = () => {
      closed = false;
      sock.destroy();
    };
    const overall = setTimeout(quiet, opts.ms ?? 10_000);
    let timer = setTimeout(quiet, opts.quietMs ?? 1500);
    sock.on('data', (d) => {
      got.push(d);
      clearTimeout(timer);
      timer = setTimeout(quiet, opts.quietMs ?? 300);
    });
    sock.on('close', () => {
      clearTimeout(timer);
      clearTimeout(overall);
      resolve({ text: Buffer.concat(got).toString('latin1'), closed, ms: Date.now() - started });
    });
    sock.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? undefined : reject(err)));
    const pieces = Array.isArray(bytes) ? bytes : [bytes];
    void (async () => {
      for (const [i, p] of pieces.entries()) {
        if (i > 0 && opts.gapMs) await new Promise((r) => setTimeout(r, opts.gapMs));
        if (!sock.destroyed) sock.write(p);
      }
    })();
  });
}

/** The status lines of the answers in `text`, in order. */
export function statuses(text: string): string[] {
  return [...text.matchAll(/HTTP\/1\.[01] (\d{3} [^\r\n]*)\r\n/g)].map((m) => m[1]!);
}

/** A raw connection the test drives step by step: write, wait for text, see whether it closed. */
export interface RawConn {
  write(bytes: Buffer | string): Promise<void>;
  /** Everything received so far (latin1). */
  text(): string;
  /** Resolves when the received text matches `re` (rejects after `ms`). */
  waitFor(re: RegExp, ms?: number): Promise<string>;
  /** Resolves when the connection closed, with the time since it opened. */
  closed: Promise<number>;
  destroy(): void;
}

export async function rawConn(port: number): Promise<RawConn> {
  const sock = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => sock.once('connect', resolve).once('error', reject));
  const opened = Date.now();
  let got = '';
  const waiters = new Set<() => void>();
  sock.on('data', (d) => {
    got += d.toString('latin1');
    for (const w of waiters) w();
  });
  sock.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => sock.once('close', () => resolve(Date.now() - opened)));
  return {
    write: (bytes) => new Promise((resolve) => (sock.write(bytes) ? resolve() : sock.once('drain', () => resolve()))),
    text: () => got,
    waitFor: (re, ms = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!re.test(got)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(got);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${re} within ${ms} ms; got ${JSON.stringify(got.slice(0, 300))}`));
        }, ms);
        waiters.add(check);
        check();
      }),
    closed,
    destroy: () => sock.destroy(),
  };
}
