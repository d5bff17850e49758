/**
 * Issue 21 item 4: readers that do not keep up hold their batches of the store thread's read
 * budget for as long as their client takes. Ten of them (here: connections that stopped reading)
 * must not stall another client's GET: read-ahead cannot take the budget's reserve, and a GET's
 * first batch goes before any read-ahead (store/read-budget.ts).
 */
import { randomBytes } from 'node:crypto';
import { request, type ClientRequest } from 'node:http';
import test from 'ava';
import { FileScope, startStore } from './harness.js';

test('ten readers that stopped reading a 40 MiB object do not stall another client\'s 10 MiB GET', async (t) => {
  t.timeout(120_000);
  const scope = new FileScope();
  t.teardown(() => scope.run());
  const store = await startStore(scope, { volumes: 6, sizeMiB: 512 });
  const big = randomBytes(40 * 1024 * 1024);
  const small = randomBytes(10 * 1024 * 1024);
  t.is((await fetch(`${store.url}/fair/big`, { method: 'PUT', body: big })).status, 201);
  t.is((await fetch(`${store.url}/fair/small`, { method: 'PUT', body: small })).status, 201);

  // Ten clients start the big GET and read nothing after the headers (the socket stays paused).
  const stalled: ClientRequest[] = [];
  t.teardown(() => stalled.forEach((r) => r.destroy()));
  await Promise.all(
    Array.from({ length: 10 }, () =>
      new Promise<void>((resolve, reject) => {
        const req = request(`${store.url}/fair/big`, (res) => {
          res.pause();
          resolve();
        });
        req.on('error', reject);
        req.end();
        stalled.push(req);
      }),
    ),
  );
  // Let their batches be read and their read-ahead asked for.
  await new Promise((r) => setTimeout(r, 1500));
  const debug = (await (await fetch(`${store.url}/$/debug`)).json()) as { readBuffers?: { inUse: number; queued: number } };
  t.log(`read budget with ten stalled readers: ${JSON.stringify(debug.readBuffers ?? debug)}`);

  const started = performance.now();
  const res = await fetch(`${store.url}/fair/small`, { signal: AbortSignal.timeout(8000) });
  const got = Buffer.from(await res.arrayBuffer());
  const ms = performance.now() - started;
  t.log(`10 MiB GET beside ten stalled readers: ${ms.toFixed(0)} ms`);
  t.is(res.status, 200);
  t.true(got.equals(small), 'byte-exact');
  t.true(ms < 2000, `took ${ms.toFixed(0)} ms`);
});
