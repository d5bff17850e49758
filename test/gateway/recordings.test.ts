/**
 * The gateway's recording routes against a real object store (six loop volumes) in the same
 * actor system, as the daemon runs them: recordings are objects `recordings/<session>/<file>`
 * (PCAPs written by protocols/media/pcap.ts, as the media bridge writes them, PUT to the store).
 * Listed, downloaded (streamed, byte for byte, Content-Length and type), merged (ordered by
 * time; headers of other link types 422; a foreign file 422), deleted; every traversal refused
 * 400 before the store is asked; 401 without the bearer; 503 where no store runs. During a
 * drain, a download whose reader pauses (16 MiB: more than the sockets buffer) holds the drain
 * open until the reader has taken it.
 */
import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import { createHash } from 'node:crypto';
import { resolve } from '../../runtime/config/settings.js';
import { sipserverChild } from '../../actors/sipserver/service-spec.js';
import { GATEWAY_MODULE, gatewayArgs, gatewaySettings, sipArgs, type GatewayValues } from '../../actors/gateway/service.js';
import { GATEWAY_ID, type GatewayArgs, type GatewayProtocol } from '../../actors/gateway/messages.js';
import type { ActorSystem } from '../../runtime/system.js';
import { pcapFileHeader, pcapRecord, readPcap } from '../../protocols/media/pcap.js';
import { startStore, type Store } from '../objstore/harness.js';
import { freePort } from '../helpers/sip.js';
import { startGateway, until } from '../helpers/gateway.js';

const TOKEN = 'recordings-token';
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const tuple = { srcAddress: '192.0.2.10', srcPort: 40000, dstAddress: '127.0.0.1', dstPort: 30000 };

/** A PCAP of ours: one record per time (ms), payload [tag, index, ...filler]. */
function pcap(times: number[], tag: number, payloadBytes = 2): Buffer {
  return Buffer.concat([pcapFileHeader(), ...times.map((ms, i) => pcapRecord(ms, tuple, Buffer.concat([Buffer.from([tag, i & 0xff]), Buffer.alloc(Math.max(0, payloadBytes - 2), 0x55)])))]);
}

async function put(store: Store, path: string, body: Buffer): Promise<void> {
  const res = await fetch(`${store.url}/${path}`, { method: 'PUT', body, headers: { 'Content-Type': 'application/vnd.tcpdump.pcap', 'Content-Length': String(body.length) } });
  if (res.status !== 201) throw new Error(`PUT ${path}: ${res.status} ${await res.text()}`);
}

/** The gateway's tree started in `system` (beside the store), on a free port, with the bearer. */
async function gatewayIn(system: ActorSystem, overrides: Partial<GatewayArgs> = {}): Promise<string> {
  const port = await freePort();
  const v: GatewayValues = { ...resolve(gatewaySettings, {}, {}), port, sipPort: 0, token: TOKEN, recordingBucket: 'recordings' };
  await system.start({ id: 'gateway.supervisor', children: [sipserverChild(sipArgs(v)), { id: GATEWAY_ID, module: GATEWAY_MODULE, args: gatewayArgs(v, { mediaLinkModule: null, ...overrides }) }] });
  return `http://127.0.0.1:${port}`;
}

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A request with the path sent exactly as written (fetch would normalise `..`). */
function raw(base: string, method: string, path: string, o: { headers?: Record<string, string>; body?: string } = {}): Promise<Raw> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path, headers: { ...AUTH, ...o.headers } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(o.body);
  });
}
const json = (r: Raw) => JSON.parse(r.body.toString('utf8')) as Record<string, unknown> & { error?: { code: string; message: string } };

async function storeWithGateway(t: ExecutionContext): Promise<{ store: Store; base: string }> {
  const store = await startStore(t);
  const base = await gatewayIn(store.system);
  return { store, base };
}

test.serial('list, streamed download, merge by time and delete of recordings stored as objects; traversal 400 before anything is touched; 401 without the bearer', async (t) => {
  const { store, base } = await storeWithGateway(t);
  const a = pcap([1000, 1040, 1080, 1120], 0xa);
  const b = pcap([1020, 1060, 1100], 0xb);
  await put(store, 'recordings/s1/a.pcap', a);
  await put(store, 'recordings/s1/b.pcap', b);

  // Listing.
  const list = await raw(base, 'GET', '/recordings/s1');
  t.is(list.status, 200);
  t.log('GET /recordings/s1 →', list.body.toString());
  const body = json(list) as { sessionId: string; recordings: Array<{ file: string; size: number; objectId: string }> };
  t.is(body.sessionId, 's1');
  t.deepEqual(body.recordings.map((r) => [r.file, r.size]), [['a.pcap', a.length], ['b.pcap', b.length]]);
  t.true(body.recordings.every((r) => /^\$[0-9a-f]+$/.test(r.objectId)));
  t.deepEqual(json(await raw(base, 'GET', '/recordings/nobody')), { sessionId: 'nobody', recordings: [] }, 'a session without recordings lists none');

  // Download: the bytes, the length, the type.
  const dl = await raw(base, 'GET', '/recordings/s1/a.pcap');
  t.is(dl.status, 200);
  t.is(dl.headers['content-type'], 'application/vnd.tcpdump.pcap');
  t.is(dl.headers['content-length'], String(a.length));
  t.is(dl.headers['content-disposition'], 'attachment; filename="a.pcap"');
  t.deepEqual(dl.body, a);
  const missing = await raw(base, 'GET', '/recordings/s1/nope.pcap');
  t.is(missing.status, 404);
  t.is(json(missing).error?.code, 'RECORDING_NOT_FOUND');

  // Merge: every record, ordered by time, one header.
  const merged = await raw(base, 'POST', '/recordings/s1/merge', { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ files: ['b.pcap', 'a.pcap'] }) });
  t.is(merged.status, 200, merged.body.toString().slice(0, 200));
  t.is(merged.headers['content-type'], 'application/vnd.tcpdump.pcap');
  t.is(merged.headers['transfer-encoding'], 'chunked');
  const read = readPcap(merged.body);
  if (!read.ok) return t.fail(read.error);
  t.deepEqual(read.packets.map((p) => p.epochMs), [1000, 1020, 1040, 1060, 1080, 1100, 1120]);
  t.deepEqual(read.packets.map((p) => p.payload[0]), [0xa, 0xb, 0xa, 0xb, 0xa, 0xb, 0xa]);
  t.is(merged.body.length, a.length + b.length - 24);
  t.log(`POST /recordings/s1/merge {"files":["b.pcap","a.pcap"]} → ${merged.status} ${merged.headers['content-type']} ${merged.body.length} bytes; times ${read.packets.map((p) => p.epochMs).join(' ')}`);
  t.log(`GET /recordings/s1/a.pcap → ${dl.status} ${['content-type', 'content-length', 'content-disposition', 'x-object-id'].map((k) => `${k}: ${dl.headers[k]}`).join(', ')}`);
  const all = await raw(base, 'POST', '/recordings/s1/merge');
  t.is(all.status, 200, 'no body: every recording of the session');
  t.deepEqual(all.body, merged.body);

  // Merge refusals.
  await put(store, 'recordings/s2/raw.pcap', pcap([5], 1));
  const eth = Buffer.from(pcapFileHeader(1));
  await put(store, 'recordings/s2/eth.pcap', eth);
  await put(store, 'recordings/s2/notes.pcap', Buffer.from('these are not packets, only words in a file'));
  const refusals: Array<[unknown, number, string, RegExp]> = [
    [{ files: ['raw.pcap', 'eth.pcap'] }, 422, 'PCAP_INCOMPATIBLE', /^eth\.pcap has link type 1, raw\.pcap has 101/],
    [{ files: ['raw.pcap', 'notes.pcap'] }, 422, 'PCAP_INVALID', /^notes\.pcap: magic 0x74686573 is not a classic pcap magic/],
    [{ files: ['raw.pcap', 'gone.pcap'] }, 404, 'RECORDING_NOT_FOUND', /s2\/gone\.pcap/],
    [{ files: [] }, 400, 'INVALID_PARAMS', /1 to 1000 files; got 0/],
    [{ files: Array.from({ length: 1001 }, (_, i) => `f${i}.pcap`) }, 400, 'INVALID_PARAMS', /got 1001/],
    [{ files: ['../s1/a.pcap'] }, 400, 'INVALID_PATH', /plain name/],
    [{ files: ['raw.pcap', 'raw.pcap'] }, 400, 'INVALID_PARAMS', /twice/],
    [{ files: 'raw.pcap' }, 400, 'INVALID_PARAMS', /array/],
    ['{nope', 400, 'INVALID_REQUEST', /not JSON/],
  ];
  for (const [b, status, code, re] of refusals) {
    const r = await raw(base, 'POST', '/recordings/s2/merge', { headers: { 'Content-Type': 'application/json' }, body: typeof b === 'string' ? b : JSON.stringify(b) });
    t.is(r.status, status, JSON.stringify(b).slice(0, 80));
    t.is(json(r).error?.code, code);
    t.regex(json(r).error?.message ?? '', re);
    if (status === 422) t.log(`POST /recordings/s2/merge ${JSON.stringify(b)} → ${r.status} ${r.body.toString()}`);
  }
  t.is((await raw(base, 'POST', '/recordings/s2/other')).status, 405);

  // Traversal: 400 before anything is touched (the objects are all still there after).
  const traversals = ['/recordings/..', '/recordings/%2e%2e', '/recordings/s1/..', '/recordings/s1/%2E%2E', '/recordings/..%2f..%2fetc', '/recordings/s1/a%5cb', '/recordings/s1/a\\b', '/recordings/s1/a%00b', '/recordings//etc/passwd', '/recordings/s1/', '/recordings/', '/recordings/s1/../s2/raw.pcap', '/recordings/%252e%252e'];
  for (const path of traversals) {
    for (const method of ['GET', 'DELETE', 'POST']) {
      const r = await raw(base, method, path);
      t.is(r.status, 400, `${method} ${path}`);
      t.is(json(r).error?.code, 'INVALID_PATH', `${method} ${path}: ${r.body.toString()}`);
      if (method === 'GET' && ['/recordings/s1/%2E%2E', '/recordings/s1/a%5cb', '/recordings//etc/passwd'].includes(path)) t.log(`GET ${path} → ${r.status} ${r.body.toString()}`);
    }
  }
  // Without the bearer: 401, nothing listed or deleted.
  for (const [method, path] of [['GET', '/recordings/s1'], ['GET', '/recordings/s1/a.pcap'], ['DELETE', '/recordings/s1/a.pcap'], ['POST', '/recordings/s1/merge']] as const) {
    const r = await raw(base, method, path, { headers: { Authorization: 'Bearer wrong' } });
    t.is(r.status, 401, `${method} ${path}`);
  }

  // Delete.
  const del = await raw(base, 'DELETE', '/recordings/s1/a.pcap');
  t.is(del.status, 200);
  t.log('DELETE /recordings/s1/a.pcap →', del.body.toString());
  t.like(json(del), { deleted: true, sessionId: 's1', file: 'a.pcap' });
  t.is((await fetch(`${store.url}/recordings/s1/a.pcap`)).status, 404, 'gone from the store');
  t.is((await raw(base, 'DELETE', '/recordings/s1/a.pcap')).status, 404);
  t.is((await raw(base, 'DELETE', '/recordings/s1')).status, 405, 'DELETE takes one recording');
  t.deepEqual((json(await raw(base, 'GET', '/recordings/s1')) as { recordings: Array<{ file: string }> }).recordings.map((r) => r.file), ['b.pcap']);
  t.is((await fetch(`${store.url}/recordings/s2/raw.pcap`)).status, 200, 'the traversal attempts touched nothing');
});

test.serial('a download whose reader pauses during a drain holds the drain open until the reader took it; the drain then ends drained', async (t) => {
  const { store, base } = await storeWithGateway(t);
  // ~16 MiB: more than loopback's socket buffers hold, so the server really waits on the reader.
  const big = pcap(Array.from({ length: 16_000 }, (_, i) => 1000 + i * 20), 0xc, 1000);
  await put(store, 'recordings/s9/long.pcap', big);
  const gateway = store.system.ref<GatewayProtocol>(GATEWAY_ID);

  const u = new URL(base);
  const hash = createHash('md5');
  let got = 0;
  let res!: http.IncomingMessage;
  const download = new Promise<number>((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: '/recordings/s9/long.pcap', headers: AUTH }, (r) => {
      res = r;
      t.is(r.statusCode, 200);
      // A reader that takes nothing for now: the server can push only what the sockets buffer.
      r.pause();
      r.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        got += chunk.length;
      });
      r.on('end', () => resolve(got));
      r.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
  // GET /drain reports open work before a drain too: wait for the download to be under way.
  const openWork = async () => json(await raw(base, 'GET', '/drain')) as { draining: boolean; state?: string; open: Record<string, number> };
  await until(async () => (await openWork()).open.recordingStreams === 1, 10_000, 'the download under way');
  const drainAt = Date.now();
  t.is((await raw(base, 'POST', '/drain')).status, 202);
  let drainedAt = 0;
  const drained = gateway.request({ type: 'drain', reason: 'test' }, { timeoutMs: 60_000 }).then((r) => ((drainedAt = Date.now()), r.outcome));
  // A recording operation still works while draining.
  t.is((await raw(base, 'GET', '/recordings/s9')).status, 200);
  await new Promise((r) => setTimeout(r, 2000));
  const held = await openWork();
  t.true(held.draining);
  t.is(held.state, 'draining', 'still draining 2 s later: the download is not out');
  t.is(held.open.recordingStreams, 1, 'the download is the open work');
  t.is(drainedAt, 0);
  t.true(got < big.length / 2, `the paused reader has taken little (${got} bytes)`);
  const resumeAt = Date.now();
  res.resume();
  t.is(await download, big.length);
  const endedAt = Date.now();
  t.is(hash.digest('hex'), createHash('md5').update(big).digest('hex'), 'the whole file, unchanged');
  t.is(await drained, 'drained');
  t.log(`drain began; reader resumed ${resumeAt - drainAt} ms later; download ended ${endedAt - resumeAt} ms after that; the drain ended ${drainedAt - resumeAt} ms after the resume`);
  t.true(drainedAt >= resumeAt, 'the drain ended only once the reader took the body');
});

test('where no object store runs, the recording routes answer 503 RECORDINGS_UNAVAILABLE; with no bucket set too', async (t) => {
  const h = await startGateway(t, { token: TOKEN, recordingBucket: 'recordings' });
  const r = await raw(h.base, 'GET', '/recordings/s1');
  t.is(r.status, 503);
  t.is(json(r).error?.code, 'RECORDINGS_UNAVAILABLE');
  t.regex(json(r).error?.message ?? '', /the object store does not run in this daemon/);
  t.is((await raw(h.base, 'GET', '/recordings/..')).status, 400, 'the path is still checked first');
  const none = await startGateway(t, { token: TOKEN });
  const n = await raw(none.base, 'GET', '/recordings/s1/a.pcap');
  t.is(n.status, 503);
  t.regex(json(n).error?.message ?? '', /GATEWAY_RECORDING_BUCKET is empty/);
});
