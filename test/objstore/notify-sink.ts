/**
 * A chat webhook for the notification tests: a real HTTP server on a loopback ephemeral port that
 * records every JSON body POSTed to it, and answers 200, or 500, or never (hang) as told.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Scope } from '../helpers/scope.js';

export interface Sink {
  url: string;
  bodies: Array<{ text: string }>;
  mode: 'ok' | 'fail' | 'hang';
  /** resolves when `n` bodies have arrived (or rejects after `ms`) */
  waitFor(n: number, ms?: number): Promise<void>;
}

export async function startSink(t: Scope): Promise<Sink> {
  const hung: ServerResponse[] = [];
  const sink: Sink = {
    url: '',
    bodies: [],
    mode: 'ok',
    async waitFor(n, ms = 10_000) {
      const end = Date.now() + ms;
      while (sink.bodies.length < n) {
        if (Date.now() > end) throw new Error(`the sink got ${sink.bodies.length} bodies, waited for ${n}: ${JSON.stringify(sink.bodies)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      sink.bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { text: string });
      if (sink.mode === 'hang') return void hung.push(res);
      res.writeHead(sink.mode === 'ok' ? 200 : 500).end(sink.mode === 'ok' ? 'ok' : 'broken');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sink.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/T000/SECRET-TOKEN`;
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const res of hung) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return sink;
}
