/**
 * The object API on six real loop-device volumes: every rule of the spec's object API, good and
 * bad input. One store for the file (loop devices are slow to make); tests run serially.
 */
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import anyTest, { type TestFn } from 'ava';
import { FileScope, startStore, type Store } from './harness.js';

const test = anyTest as TestFn<{ store: Store }>;
const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

const scope = new FileScope();
test.before(async (t) => {
  t.context.store = await startStore(scope, { volumes: 6, sizeMiB: 512 });
});
test.after.always(() => scope.run());

function put(s: Store, path: string, body: Uint8Array, headers: Record<string, string> = {}) {
  return fetch(s.url + path, { method: 'PUT', body, headers: { 'Content-Type': 'application/x-test', ...headers } });
}

/** Every slice file (committed or temporary) on the store's volumes. */
function sliceFiles(s: Store): string[] {
  const out: string[] = [];
  const mnt = join(s.stateDir, 'mnt');
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/slices/.test(p)) out.push(p);
    }
  };
  for (const v of readdirSync(mnt)) {
    try {
      walk(join(mnt, v, 'objstore', 'slices'));
    } catch {
      /* not a volume */
    }
  }
  return out;
}

test.serial('PUT then GET round-trips objects of every awkward size, with every header', async (t) => {
  const s = t.context.store;
  const cs = 256 * 1024;
  for (const size of [0, 1, 7, 8, 9, 4095, cs - 1, cs, cs + 1, 4 * cs - 1, 4 * cs, 4 * cs + 1, 3 * 4 * cs + 12345]) {
    const body = randomBytes(size);
    const path = `/sizes/obj-${size}`;
    const res = await put(s, path, body);
    t.is(res.status, 201, `PUT ${size}: ${await res.clone().text()}`);
    const id = res.headers.get('x-object-id')!;
    t.regex(id, /^\$[0-9a-f]{24}$/);
    t.regex(res.headers.get('x-container-id')!, /^[0-9a-f]{24}$/);
    t.is(res.headers.get('content-md5'), md5(body));
    const created = parseInt(id.slice(1, 13), 16);
    t.true(Math.abs(created - Date.now()) < 60_000, 'the id embeds the creation time');

    const get = await fetch(s.url + path);
    t.is(get.status, 200);
    const got = new Uint8Array(await get.arrayBuffer());
    t.is(got.byteLength, size);
    t.true(Buffer.from(got).equals(body), `bytes of ${size}`);
    const h = get.headers;
    t.is(h.get('x-object-id'), id);
    t.is(h.get('content-md5'), md5(body));
    t.is(h.get('content-type'), 'application/x-test');
    t.is(h.get('accept-ranges'), 'bytes');
    // Six volumes: 4+2; objects of at most 8 KiB are 1+2 (fewer blocks, fewer commits).
    const k = size <= 8192 ? 1 : 4;
    t.is(h.get('x-data-slice-count'), String(k), `data slices of ${size}`);
    t.is(h.get('x-parity-slice-count'), '2');
    const vols = [...h.get('x-data-slice-volumes')!.split(','), ...h.get('x-parity-slice-volumes')!.split(',')];
    t.is(new Set(vols).size, k + 2, 'no two slices of an object share a volume');
    t.truthy(h.get('x-chunk-size'));
    t.is(h.get('access-control-allow-origin'), null, 'no CORS outside OPTIONS');
    const byId = await fetch(`${s.url}/${id}`);
    t.is(byId.status, 200);
    t.is(md5(new Uint8Array(await byId.arrayBuffer())), md5(body));
  }
});

test.serial('a 200 MiB object streams in and out byte-exact', async (t) => {
  const s = t.context.store;
  const body = randomBytes(200 * 1024 * 1024);
  const res = await put(s, '/big/200m', body, { 'Content-MD5': md5(body) });
  t.is(res.status, 201, await res.clone().text());
  const got = new Uint8Array(await (await fetch(s.url + '/big/200m')).arrayBuffer());
  t.is(got.byteLength, body.byteLength);
  t.is(md5(got), md5(body));
});

test.serial('HEAD has the headers of GET and no body', async (t) => {
  const s = t.context.store;
  const body = randomBytes(1000);
  await put(s, '/head/x', body);
  const res = await fetch(s.url + '/head/x', { method: 'HEAD' });
  t.is(res.status, 200);
  t.is(res.headers.get('content-length'), '1000');
  t.is(res.headers.get('content-md5'), md5(body));
  t.is((await res.arrayBuffer()).byteLength, 0);
});

test.serial('single ranges give 206 with Content-Range; multi and suffix ranges give 416', async (t) => {
  const s = t.context.store;
  const body = randomBytes(3 * 1024 * 1024 + 17);
  await put(s, '/ranges/r', body);
  const n = body.byteLength;
  for (const [spec, a, b] of [['bytes=0-0', 0, 0], ['bytes=0-', 0, n - 1], ['bytes=10-20', 10, 20], [`bytes=${n - 1}-`, n - 1, n - 1], [`bytes=5-${n + 100}`, 5, n - 1], ['bytes=262143-262144', 262143, 262144], ['bytes=1048575-1048577', 1048575, 1048577]] as const) {
    const res = await fetch(s.url + '/ranges/r', { headers: { Range: spec } });
    t.is(res.status, 206, spec);
    t.is(res.headers.get('content-range'), `bytes ${a}-${b}/${n}`);
    t.true(Buffer.from(await res.arrayBuffer()).equals(body.subarray(a, b + 1)), spec);
  }
  for (const spec of ['bytes=0-1,5-6', 'bytes=-10', `bytes=${n}-`, 'bytes=9-3', 'items=0-1', 'bytes=abc']) {
    const res = await fetch(s.url + '/ranges/r', { headers: { Range: spec } });
    t.is(res.status, 416, spec);
    t.is(res.headers.get('content-range'), `bytes */${n}`);
    t.regex(((await res.json()) as { error: { message: string } }).error.message, /./);
  }
});

test.serial('download_as sets an attachment disposition', async (t) => {
  const s = t.context.store;
  await put(s, '/dl/file', randomBytes(10));
  const res = await fetch(s.url + '/dl/file?download_as=report%20final.pdf');
  t.is(res.status, 200);
  t.regex(res.headers.get('content-disposition')!, /^attachment; filename="report final\.pdf"/);
  t.is((await fetch(s.url + '/dl/file?download_as=a%2Fb')).status, 400);
});

test.serial('PUT refusals: existing path, $ paths, no length, bad MD5 header, containers', async (t) => {
  const s = t.context.store;
  t.is((await put(s, '/refuse/a', randomBytes(5))).status, 201);
  const again = await put(s, '/refuse/a', randomBytes(5));
  t.is(again.status, 409);
  t.is(((await again.json()) as { error: { code: string } }).error.code, 'PATH_EXISTS');
  t.is((await put(s, '/$abc', randomBytes(5))).status, 400);
  t.is((await put(s, `/$${'0'.repeat(24)}`, randomBytes(5))).status, 400);
  t.is((await put(s, '/refuse/a/child', randomBytes(5))).status, 409, 'under an object');
  t.is((await put(s, '/refuse/dir/f', randomBytes(5))).status, 201);
  t.is((await put(s, '/refuse/dir', randomBytes(5))).status, 409, 'a container');
  t.is((await put(s, '/refuse/md5', randomBytes(5), { 'Content-MD5': 'nothex' })).status, 400);
  const chunked = await fetch(s.url + '/refuse/chunked', { method: 'PUT', body: new Blob([randomBytes(10)]).stream(), duplex: 'half' } as RequestInit);
  t.is(chunked.status, 411);
  t.is((await fetch(s.url + '/refuse/a', { method: 'POST', body: 'x' })).status, 400);
  t.is((await fetch(s.url + '/refuse/dir')).status, 404, 'GET on a container');
  t.is((await fetch(s.url + '/refuse/dir/')).status, 404);
  t.is((await fetch(s.url + '/refuse/nothing')).status, 404);
});

test.serial('two concurrent PUTs to one path: exactly one wins', async (t) => {
  const s = t.context.store;
  const results = await Promise.all([1, 2, 3].map(() => put(s, '/race/one', randomBytes(2 * 1024 * 1024))));
  const codes = results.map((r) => r.status).sort();
  t.deepEqual(codes, [201, 409, 409]);
});

test.serial('an MD5 mismatch gives 456 and leaves nothing behind', async (t) => {
  const s = t.context.store;
  const before = sliceFiles(s).length;
  const body = randomBytes(3 * 1024 * 1024);
  const res = await put(s, '/md5/bad', body, { 'Content-MD5': '0'.repeat(32) });
  t.is(res.status, 456);
  t.is(res.headers.get('x-received-md5'), md5(body));
  t.is((await fetch(s.url + '/md5/bad')).status, 404);
  t.is(sliceFiles(s).length, before, 'no slice files left');
});

test.serial('a body that stops short and stalls gets 455, and nothing is left', async (t) => {
  const s = t.context.store;
  const before = sliceFiles(s).length;
  const port = Number(new URL(s.url).port);
  const response = await new Promise<string>((resolve, reject) => {
    const sock = connect(port, '127.0.0.1', () => {
      sock.write(`PUT /short/x HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n`);
      sock.write(randomBytes(10));
    });
    let out = '';
    sock.on('data', (d) => (out += d.toString('latin1')));
    sock.on('close', () => resolve(out));
    sock.on('error', reject);
    setTimeout(() => sock.destroy(), 8000);
  });
  t.regex(response, /^HTTP\/1\.1 455 Length Mismatch/);
  t.regex(response, /X-Received-Bytes: 10\r\n/i);
  t.regex(response, /X-Expected-Bytes: 100000\r\n/i);
  t.is((await fetch(s.url + '/short/x')).status, 404);
  t.is(sliceFiles(s).length, before);
});

test.serial('a client that half-closes mid-body leaves nothing behind', async (t) => {
  const s = t.context.store;
  const before = sliceFiles(s).length;
  const port = Number(new URL(s.url).port);
  await new Promise<void>((resolve) => {
    const sock = connect(port, '127.0.0.1', () => {
      sock.write(`PUT /short/y HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\n`);
      sock.end(randomBytes(2_000_000));
    });
    sock.on('close', () => resolve());
    sock.on('error', () => resolve());
    sock.resume();
  });
  // The server may still be opening the slices when the client is gone: it removes them once
  // it has. Wait until the count is back and stays so for a second.
  let stable = 0;
  for (let i = 0; i < 100 && stable < 5; i++) {
    stable = sliceFiles(s).length === before ? stable + 1 : 0;
    await new Promise((r) => setTimeout(r, 200));
  }
  t.is((await fetch(s.url + '/short/y')).status, 404);
  t.is(sliceFiles(s).length, before);
});

test.serial('GETs give their read buffers back: read to the end, a range, and a client gone mid-body', async (t) => {
  const s = t.context.store;
  const body = randomBytes(40 * 1024 * 1024 + 123); // three batches of 16 stripes: 16 + 16 + 8 MiB
  t.is((await put(s, '/budget/o', body)).status, 201);
  const inUse = async () => ((await (await fetch(`${s.url}/$/debug`)).json()) as { readBuffers: { inUse: number; queued: number; limit: number } }).readBuffers;
  for (let i = 0; i < 20; i++) {
    const got = new Uint8Array(await (await fetch(s.url + '/budget/o')).arrayBuffer());
    if (i === 0) t.true(Buffer.from(got).equals(body), 'bytes exact');
  }
  const part = await fetch(s.url + '/budget/o', { headers: { Range: 'bytes=100-20000000' } });
  t.is(part.status, 206);
  t.is((await part.arrayBuffer()).byteLength, 20000000 - 100 + 1);
  // A client that reads a little of the body and goes away.
  const port = Number(new URL(s.url).port);
  await new Promise<void>((resolve) => {
    const sock = connect(port, '127.0.0.1', () => sock.write('GET /budget/o HTTP/1.1\r\nHost: x\r\n\r\n'));
    let got = 0;
    sock.on('data', (d: Buffer) => {
      got += d.byteLength;
      if (got > 1_000_000) sock.destroy();
    });
    sock.on('close', () => resolve());
    sock.on('error', () => resolve());
  });
  // Everything held comes back (the last reads may still be finishing: wait a little).
  let figures = await inUse();
  for (let i = 0; i < 50 && (figures.inUse > 0 || figures.queued > 0); i++) {
    await new Promise((r) => setTimeout(r, 100));
    figures = await inUse();
  }
  t.is(figures.limit, 256 * 1024 * 1024);
  t.is(figures.inUse, 0, 'no read buffer held once every GET ended');
  t.is(figures.queued, 0);
});

test.serial('OPTIONS answers 204 with Allow and CORS for an object, 404 otherwise', async (t) => {
  const s = t.context.store;
  await put(s, '/opt/o', randomBytes(3));
  const res = await fetch(s.url + '/opt/o', { method: 'OPTIONS', headers: { Origin: 'https://app.example' } });
  t.is(res.status, 204);
  t.regex(res.headers.get('allow')!, /GET.*PUT.*DELETE/);
  t.is(res.headers.get('access-control-allow-origin'), 'https://app.example');
  t.is((await fetch(s.url + '/opt/missing', { method: 'OPTIONS' })).status, 404);
});

test.serial('DELETE removes the object and its slices; a delete-protected bucket refuses with 403', async (t) => {
  const s = t.context.store;
  const body = randomBytes(2 * 1024 * 1024);
  const created = await put(s, '/del/x', body);
  const id = created.headers.get('x-object-id')!;
  const info = (await (await fetch(`${s.url}/$/fileinfo/del/x`)).json()) as { slices: Array<{ path: string; volumeId: number }> };
  t.is(info.slices.length, 6);
  for (const sl of info.slices) t.true(statSync(sl.path).isFile());
  const del = await fetch(s.url + '/del/x', { method: 'DELETE' });
  t.is(del.status, 204);
  t.is((await fetch(s.url + '/del/x')).status, 404);
  t.is((await fetch(`${s.url}/${id}`)).status, 404);
  for (const sl of info.slices) t.throws(() => statSync(sl.path));

  await put(s, '/locked/y', body);
  const pol = await fetch(`${s.url}/$/buckets/locked/policy`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ deleteProtected: true }) });
  t.is(pol.status, 200);
  const refused = await fetch(s.url + '/locked/y', { method: 'DELETE' });
  t.is(refused.status, 403);
  t.is(md5(new Uint8Array(await (await fetch(s.url + '/locked/y')).arrayBuffer())), md5(body), 'nothing touched');
  const buckets = (await (await fetch(`${s.url}/$/buckets`)).json()) as { buckets: Array<{ name: string; deleteProtected: boolean }> };
  t.true(buckets.buckets.find((b) => b.name === 'locked')!.deleteProtected);
  t.is((await fetch(`${s.url}/$/buckets/locked/policy`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ deleteProtected: 'yes' }) })).status, 400);
});

test.serial('a flipped byte in a slice file is never returned: the read rebuilds and records a fault', async (t) => {
  const s = t.context.store;
  const body = randomBytes(1024 * 1024 + 333);
  await put(s, '/rot/x', body);
  const info = (await (await fetch(`${s.url}/$/fileinfo/rot/x`)).json()) as { object: { id: string }; slices: Array<{ path: string; index: number }> };
  const victim = info.slices.find((sl) => sl.index === 1)!;
  const bytes = readFileSync(victim.path);
  bytes[164] = bytes[164]! ^ 0xff;
  writeFileSync(victim.path, bytes);
  execFileSync('sh', ['-c', 'sync; echo 1 > /proc/sys/vm/drop_caches']);
  const got = new Uint8Array(await (await fetch(s.url + '/rot/x')).arrayBuffer());
  t.true(Buffer.from(got).equals(body));
  const faults = (await (await fetch(`${s.url}/$/faults`)).json()) as { faults: Array<{ objectId: string; sliceIndex: number; code: string }> };
  const f = faults.faults.find((x) => x.objectId === info.object.id);
  t.truthy(f);
  t.is(f!.sliceIndex, 1);
  t.is(f!.code, 'CHECKSUM');
});

test.serial('GET /$/status and /$/volumes describe the fleet', async (t) => {
  const s = t.context.store;
  const status = (await (await fetch(`${s.url}/$/status`)).json()) as { volumes: { writable: number[] }; objects: number; gbCapacity: number };
  t.is(status.volumes.writable.length, 6);
  t.true(status.objects > 0);
  t.true(status.gbCapacity > 0);
  const vols = (await (await fetch(`${s.url}/$/volumes`)).json()) as { volumes: Array<Record<string, unknown>> };
  t.is(vols.volumes.length, 6);
  for (const v of vols.volumes) {
    for (const f of ['id', 'isEnabled', 'isReadOnly', 'isHealthy', 'isDraining', 'isDeleted', 'isMissing', 'label', 'comment', 'bytesTotal', 'bytesFree', 'smartInfo', 'busGroup']) t.true(f in v, f);
    t.is(v.isMissing, false);
    t.is(v.busGroup, 'virtual');
  }
  const one = (await (await fetch(`${s.url}/$/volumes/${vols.volumes[0]!.id as number}`)).json()) as { volume: { smartInfo: { available: boolean; reason: string } } };
  t.is(one.volume.smartInfo.available, false);
  t.truthy(one.volume.smartInfo.reason);
  t.is((await fetch(`${s.url}/$/volumes/999`)).status, 404);
  t.is((await fetch(`${s.url}/$/volumes/abc`)).status, 400);
});

test.serial('POST /$/volumes refuses bad requests, each with a clear error', async (t) => {
  const s = t.context.store;
  const post = (body: unknown) => fetch(`${s.url}/$/volumes`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const cases: Array<[unknown, number, RegExp]> = [
    [{ blockPath: s.devices[0], wipe: true }, 400, /not a boolean/],
    [{ blockPath: s.devices[0], wipe: Date.now() - 60_000 }, 400, /within 10000 ms/],
    [{ blockPath: s.devices[0], wipe: Date.now() + 60_000 }, 400, /within 10000 ms/],
    [{ blockPath: s.devices[0], wipe: Date.now(), replace: true }, 400, /no replace option/],
    [{ blockPath: s.devices[0], wipe: Date.now(), encrypt: 'yes' }, 400, /^encrypt must be a boolean/],
    [{ blockPath: 'sdb', wipe: Date.now() }, 400, /blockPath/],
    [{ wipe: Date.now() }, 400, /blockPath/],
    // A NUL or another control byte in blockPath: 400 naming the field, not Node's 500 (issue 21 item 10).
    [{ blockPath: '/dev/loop\u00000', wipe: Date.now() }, 400, /^blockPath must not contain control characters \(NUL/],
    [{ blockPath: '/dev/sd\nb', wipe: Date.now() }, 400, /^blockPath must not contain control characters/],
    [{ blockPath: s.devices[0], wipe: Date.now(), colour: 'red' }, 400, /unknown field.*colour/],
    [{ blockPath: s.devices[0], wipe: Date.now() }, 409, /already a registered volume/],
  ];
  for (const [body, status, msg] of cases) {
    const res = await post(body);
    t.is(res.status, status, JSON.stringify(body));
    t.regex(((await res.json()) as { error: { message: string } }).error.message, msg);
  }
  const bad = await fetch(`${s.url}/$/volumes`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{not json' });
  t.is(bad.status, 400);
  t.is((await fetch(`${s.url}/$/nope`)).status, 404);
});

test.serial('a web page on another site cannot drive the management API; preflights approve allowed origins only (issue 21 item 11)', async (t) => {
  const s = t.context.store;
  const json = { 'Content-Type': 'application/json' };
  const before = await (await fetch(`${s.url}/$/volumes`)).text();
  const freezeBefore = await (await fetch(`${s.url}/$/maintenance-freeze`)).json();
  // What a page may send without a preflight: a text/plain or form POST (no Origin: still refused by type).
  for (const type of ['text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    const res = await fetch(`${s.url}/$/volumes`, { method: 'POST', headers: { 'Content-Type': type }, body: JSON.stringify({ blockPath: s.devices[0], wipe: Date.now() }) });
    t.is(res.status, 415, type);
    t.like(((await res.json()) as { error: object }).error, { code: 'UNSUPPORTED_MEDIA_TYPE' });
  }
  // Another site's Origin: refused whatever the type, reads included.
  for (const [method, path, body] of [['PUT', '/$/maintenance-freeze', { frozen: true }], ['POST', '/$/volumes', { blockPath: s.devices[0], wipe: Date.now() }], ['GET', '/$/status', undefined]] as const) {
    const res = await fetch(`${s.url}${path}`, { method, headers: { ...json, Origin: 'https://evil.example' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    t.is(res.status, 403, `${method} ${path}`);
    t.like(((await res.json()) as { error: object }).error, { code: 'ORIGIN_NOT_ALLOWED' });
  }
  t.is(await (await fetch(`${s.url}/$/volumes`)).text(), before, 'no volume was provisioned');
  t.deepEqual(await (await fetch(`${s.url}/$/maintenance-freeze`)).json(), freezeBefore, 'the freeze did not change');
  // The store's own origin (its UI) and an allow-listed one pass.
  for (const origin of [s.url, 'https://app.example']) t.is((await fetch(`${s.url}/$/status`, { headers: { Origin: origin } })).status, 200, origin);
  // The objects' preflight: CORS headers for an allowed origin only.
  await put(s, '/opt/cors', randomBytes(3));
  const evil = await fetch(s.url + '/opt/cors', { method: 'OPTIONS', headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'DELETE' } });
  t.is(evil.status, 204);
  t.is(evil.headers.get('access-control-allow-origin'), null);
  t.is(evil.headers.get('access-control-allow-methods'), null);
  const own = await fetch(s.url + '/opt/cors', { method: 'OPTIONS', headers: { Origin: s.url, 'Access-Control-Request-Method': 'DELETE' } });
  t.is(own.headers.get('access-control-allow-origin'), s.url);
});
