/**
 * The load generator's ceiling: a Node HTTP server in its own process that stores nothing. A PUT
 * reads the body and answers 201 with the Content-MD5 it was sent (not checked); a GET answers with
 * as many bytes as were PUT under that name, sent from one preallocated buffer, and the same MD5.
 * The same scenarios against it show what the client and the loopback can do on this machine.
 *
 *   node dist/bench/objstore/sink.js      prints {"port": N} once listening on 127.0.0.1
 */
import { randomFillSync } from 'node:crypto';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { spawn, type ChildProcess } from 'node:child_process';

const SRC = randomFillSync(Buffer.allocUnsafeSlow(4 * 1024 * 1024));

function serve(): void {
  const objects = new Map<string, { size: number; md5: string }>();
  const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const path = req.url ?? '/';
    if (req.method === 'PUT') {
      let size = 0;
      req.on('data', (c: Buffer) => (size += c.length));
      req.on('end', () => {
        const md5 = String(req.headers['content-md5'] ?? '');
        objects.set(path, { size, md5 });
        res.writeHead(201, { 'content-md5': md5, 'content-length': 0 }).end();
      });
      return;
    }
    if (req.method === 'DELETE') {
      objects.delete(path);
      res.writeHead(204).end();
      return;
    }
    const o = objects.get(path);
    if (req.method !== 'GET' || !o) {
      res.writeHead(404, { 'content-length': 0 }).end();
      return;
    }
    res.writeHead(200, { 'content-length': o.size, 'content-md5': o.md5, 'content-type': 'application/octet-stream' });
    let left = o.size;
    const pump = (): void => {
      while (left > 0) {
        const n = Math.min(left, SRC.length);
        left -= n;
        if (!res.write(SRC.subarray(0, n))) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  });
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address();
    process.stdout.write(`${JSON.stringify({ port: typeof addr === 'object' && addr ? addr.port : 0 })}\n`);
  });
  process.on('SIGTERM', () => process.exit(0));
}

/** Starts the sink in a child process; resolves with its port and a stop function. */
export function startSink(): Promise<{ port: number; pid: number; stop: () => Promise<void> }> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, [fileURLToPath(import.meta.url)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`sink exited ${code} before listening`)));
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      const { port } = JSON.parse(out.slice(0, nl)) as { port: number };
      child.removeAllListeners('exit');
      const stop = () =>
        new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once('exit', () => done());
          child.kill('SIGTERM');
        });
      resolve({ port, pid: child.pid!, stop });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) serve();
