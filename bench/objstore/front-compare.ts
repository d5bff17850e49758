/**
 * The HTTP front alone, side by side (issue 21, the server decision): one-stream PUT and GET of a
 * 64 MiB body against a uWebSockets.js server and a Node `http` (llhttp) server that do nothing
 * but count the PUT body and send a GET body from memory with backpressure. Server and client
 * (the bench's lean transport) share one thread, as in the lead's loopback measurement. It tells
 * what each front could carry at most; the store's own data path (bench/objstore, `npm run
 * bench:objstore`) is the real figure. Run: `node dist/bench/objstore/front-compare.js [runs]`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeApp, listen, loadUws } from '../../runtime/http/uws.js';
import { LeanHttp } from './http1.js';

const SIZE = 64 * 1024 * 1024;
const body = Buffer.alloc(SIZE, 7);

async function uwsServer(): Promise<{ port: number; close(): void }> {
  const app = loadUws().App();
  app.put('/*', (res) => {
    let n = 0;
    res.onAborted(() => undefined);
    res.onData((chunk, last) => {
      n += chunk.byteLength;
      if (last) res.cork(() => res.writeStatus('201 Created').end(String(n)));
    });
  });
  app.get('/*', (res) => {
    let aborted = false;
    res.onAborted(() => (aborted = true));
    // Views, never copies: the offset onWritable reports is the bytes of the body already out.
    const view = new Uint8Array(body.buffer, body.byteOffset, SIZE);
    res.cork(() => {
      res.writeStatus('200 OK');
      const [ok] = res.tryEnd(view, SIZE);
      if (!ok) res.onWritable((off) => (aborted ? true : res.tryEnd(view.subarray(off), SIZE)[0]));
    });
  });
  const { socket, port } = await listen(app, '127.0.0.1', 0);
  return { port, close: () => closeApp(app, socket) };
}

async function nodeServer(): Promise<{ port: number; close(): void }> {
  const server = http.createServer((req, res) => {
    if (req.method === 'PUT') {
      let n = 0;
      req.on('data', (c: Buffer) => (n += c.byteLength));
      req.on('end', () => {
        res.writeHead(201);
        res.end(String(n));
      });
    } else {
      res.writeHead(200, { 'Content-Length': SIZE });
      res.end(body);
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}

async function measure(name: string, port: number, runs: number): Promise<void> {
  const client = new LeanHttp('127.0.0.1', port);
  for (const op of ['PUT', 'GET'] as const) {
    const rates: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const r = await client.send(op, '/x', op === 'PUT' ? { Host: 'bench', 'Content-Length': String(SIZE) } : { Host: 'bench' }, op === 'PUT' ? body : undefined);
      const s = (performance.now() - t0) / 1000;
      if (r.status !== (op === 'PUT' ? 201 : 200) || (op === 'GET' && r.bytes !== SIZE)) throw new Error(`${name} ${op}: ${r.status} ${r.bytes}`);
      rates.push(SIZE / 1048576 / s);
    }
    rates.sort((a, b) => a - b);
    console.log(`${name.padEnd(8)} ${op} 64 MiB, 1 stream: median ${rates[rates.length >> 1]!.toFixed(0)} MiB/s (min ${rates[0]!.toFixed(0)}, max ${rates[rates.length - 1]!.toFixed(0)}, ${runs} runs)`);
  }
  (client as unknown as { close?: () => void }).close?.();
}

const runs = Number(process.argv[2] ?? 9);
for (const [name, start] of [['uWS', uwsServer], ['node:http', nodeServer]] as const) {
  const s = await start();
  await measure(name, s.port, runs);
  s.close();
}
process.exit(0);
