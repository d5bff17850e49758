/**
 * URL file sources against real HTTP(S) servers on loopback addresses: a WAV made by ffmpeg,
 * served slowly, goes buffering → playing and reaches an RTP peer as its tone; the cache; and the
 * SSRF rules, each refused with its message (an origin not listed, private, link-local and
 * loopback addresses, a redirect to loopback that is never connected, https → http, too many
 * redirects, credentials, other schemes, an oversize body by its Content-Length and by its bytes,
 * a server that never answers and one that stalls mid-body, a 404, a body that is not a WAV).
 */
import test, { type ExecutionContext } from 'ava';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseCidrList } from '../../protocols/media/ip.js';
import { parseOrigins } from '../../protocols/media/url-policy.js';
import type { MediaValues } from '../../actors/media/service.js';
import { audioTempDir, dominantFrequency, ffmpeg } from '../helpers/audio.js';
import { bridgeSession, leg, outcome, RtpPeer, sleep } from '../helpers/media.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A loopback HTTP server of the test; `hits` counts requests per path. */
async function serve(t: ExecutionContext, handler: Handler, host = '127.0.0.1', tls?: Server): Promise<{ origin: string; hits: Map<string, number> }> {
  const server = tls ?? createServer();
  const hits = new Map<string, number>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    hits.set(req.url ?? '', (hits.get(req.url ?? '') ?? 0) + 1);
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  t.teardown(() => {
    server.closeAllConnections?.();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { origin: `${tls ? 'https' : 'http'}://${host}:${(server.address() as AddressInfo).port}`, hits };
}

async function toneWav(t: ExecutionContext, freq: number): Promise<Buffer> {
  const dir = audioTempDir(t);
  await ffmpeg(t, ['-f', 'lavfi', '-i', `sine=frequency=${freq}:sample_rate=8000:duration=1`, '-c:a', 'pcm_s16le', join(dir, 'tone.wav')]);
  return readFileSync(join(dir, 'tone.wav'));
}

const url = (values: Partial<MediaValues>) => values;

test('a URL file is buffering while it downloads, then plays its tone into an RTP peer; a second create of the URL comes from the cache; cache_ttl_secs 0 fetches again', async (t) => {
  const wav = await toneWav(t, 600);
  const srv = await serve(t, (req, res) => {
    if (req.url?.startsWith('/audio/tone.wav')) {
      res.writeHead(200, { 'Content-Type': 'audio/wav', 'Content-Length': wav.length });
      res.write(wav.subarray(0, 100));
      setTimeout(() => res.end(wav.subarray(100)), 400); // the body takes 400 ms: buffering is seen
    } else res.writeHead(404).end();
  });
  const { c } = await bridgeSession(t, url({ fileOrigins: [srv.origin], fileNetworks: parseCidrList('127.0.0.0/8') }));
  const peer = await RtpPeer.open(t);
  await leg(c, peer);
  const source = `${srv.origin}/audio/tone.wav?token=secret-in-query`;
  const playing = c.waitFor('endpoint.state_changed', (e) => e.state === 'playing', 5000);
  const made = await c.call('endpoint.create_file', { source });
  t.is(made.state, 'buffering');
  t.is(made.duration_ms, 0);
  const info = (await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === made.endpoint_id)!;
  t.is(info.state, 'buffering');
  t.is(info.source, `${srv.origin}/…/tone.wav`, 'shown without its query');
  t.regex(await outcome(c.call('endpoint.file.pause', { endpoint_id: made.endpoint_id })), /^ENDPOINT_ERROR: .*still buffering/);
  const ev = await playing;
  t.is(ev.previous_state, 'buffering');
  t.is(ev.endpoint_id, made.endpoint_id);
  const finished = await c.waitFor('endpoint.file.finished', (e) => e.endpoint_id === made.endpoint_id, 5000);
  t.is(finished.reason, 'completed');
  t.is(finished.played_ms, 1000);
  await sleep(100);
  t.true(peer.received.length >= 45, `${peer.received.length} packets`);
  const f = dominantFrequency(peer.decodedPcmu(), 8000);
  t.true(Math.abs(f - 600) < 5, `${f} Hz`);
  t.is(srv.hits.get('/audio/tone.wav?token=secret-in-query'), 1);

  // The events are watched from before each call: a cached file can be playing before the answer is read.
  const cachedPlays = c.waitFor('endpoint.state_changed', (e) => e.previous_state === 'buffering' && e.endpoint_id !== made.endpoint_id, 2000);
  const again = await c.call('endpoint.create_file', { source });
  t.is((await cachedPlays).endpoint_id, again.endpoint_id);
  t.is(srv.hits.get('/audio/tone.wav?token=secret-in-query'), 1, 'the second came from the cache');
  const freshPlays = c.waitFor('endpoint.state_changed', (e) => e.previous_state === 'buffering' && e.endpoint_id !== made.endpoint_id && e.endpoint_id !== again.endpoint_id, 5000);
  const fresh = await c.call('endpoint.create_file', { source, cache_ttl_secs: 0 });
  t.is((await freshPlays).endpoint_id, fresh.endpoint_id);
  t.is(srv.hits.get('/audio/tone.wav?token=secret-in-query'), 2, 'cache_ttl_secs 0 downloads again');
});

test('SSRF: every refusal is the create\'s ENDPOINT_ERROR, names the rule, and creates nothing; a redirect to loopback never connects there', async (t) => {
  const wav = await toneWav(t, 500);
  // B: the loopback server a redirect points at. It must never be reached.
  const b = await serve(t, (_req, res) => res.writeHead(200, { 'Content-Length': wav.length }).end(wav));
  // A: on 127.0.0.2, the one network the bridge allows; redirects as its path says.
  const a = await serve(
    t,
    (req, res) => {
      const p = req.url ?? '';
      if (p === '/to-b') return res.writeHead(302, { Location: `${b.origin}/x.wav` }).end();
      const hop = /^\/hop(\d+)$/.exec(p);
      if (hop) return res.writeHead(302, { Location: `/hop${Number(hop[1]) + 1}` }).end();
      if (p === '/big') return res.writeHead(200, { 'Content-Length': 5_000_000 }).end();
      if (p === '/hang') return; // never answers
      if (p === '/missing') return res.writeHead(404).end();
      res.writeHead(200, { 'Content-Length': wav.length }).end(wav);
    },
    '127.0.0.2',
  );
  const dir = audioTempDir(t);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=hostd-test', '-addext', 'subjectAltName=IP:127.0.0.2'], { stdio: 'ignore' });
  const tls = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) });
  const s = await serve(t, (req, res) => (req.url === '/down' ? res.writeHead(301, { Location: `${a.origin}/tone.wav` }).end() : res.writeHead(200, { 'Content-Length': wav.length }).end(wav)), '127.0.0.2', tls);
  const { c } = await bridgeSession(
    t,
    url({
      fileOrigins: parseOrigins([a.origin, b.origin, s.origin, 'http://10.1.2.3', 'http://169.254.169.254', 'http://[::ffff:127.0.0.1]:8080'].join(',')),
      fileNetworks: parseCidrList('127.0.0.2/32'),
      fileCa: join(dir, 'cert.pem'),
      fileMaxBytes: 100_000,
    }),
  );
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ source: 'http://127.0.0.9:1/x.wav' }, /origin http:\/\/127\.0\.0\.9:1 is not in MEDIA_FILE_ORIGINS/],
    [{ source: 'http://10.1.2.3/x.wav' }, /10\.1\.2\.3 is private \(RFC 1918\), and not in MEDIA_FILE_NETWORKS/],
    [{ source: 'http://169.254.169.254/latest/meta-data' }, /169\.254\.169\.254 is link-local/],
    [{ source: 'http://[::ffff:127.0.0.1]:8080/x.wav' }, /::ffff:7f00:1 is loopback/],
    [{ source: `${b.origin}/x.wav` }, /127\.0\.0\.1 is loopback, and not in MEDIA_FILE_NETWORKS/],
    [{ source: `${a.origin}/to-b` }, /a redirect led to .*127\.0\.0\.1 is loopback/],
    [{ source: `${s.origin}/down` }, /https → http is refused/],
    [{ source: `${a.origin}/hop0` }, /more than 5 redirects/],
    [{ source: `${a.origin}/big` }, /the file is 5000000 bytes; the limit is 100000/],
    [{ source: `${a.origin}/hang`, timeout_ms: 300 }, /no complete answer within timeout_ms 300/],
    [{ source: `${a.origin}/missing` }, /answered 404/],
    [{ source: `http://user:pw@${a.origin.slice(7)}/x.wav` }, /a user name or password in the URL is refused/],
    [{ source: 'ftp://127.0.0.2/x.wav' }, /scheme ftp: is not allowed/],
    [{ source: 'file:///etc/passwd' }, /scheme file: is not allowed/],
  ];
  for (const [params, expected] of cases) {
    const got = await outcome(c.call('endpoint.create_file', params as { source: string }));
    t.regex(got, /^ENDPOINT_ERROR: /, JSON.stringify(params));
    t.regex(got, expected, JSON.stringify(params));
    t.false(/pw|meta-data/.test(got.replace(/password/, '')), `no secret or path in: ${got}`);
  }
  t.deepEqual((await c.call('session.info', {})).endpoints, [], 'nothing was created');
  t.is(b.hits.size, 0, 'the loopback server was never connected to');
  // The allowed ones play: a plain one, and https with the CA of MEDIA_FILE_CA.
  const seen = new Set<string>();
  for (const source of [`${a.origin}/tone.wav`, `${s.origin}/tone.wav`]) {
    const next = c.waitFor('endpoint.state_changed', (e) => e.previous_state === 'buffering' && !seen.has(e.endpoint_id), 5000);
    const made = await c.call('endpoint.create_file', { source });
    const ev = await next;
    seen.add(made.endpoint_id);
    t.is(ev.endpoint_id, made.endpoint_id);
    t.is(ev.state, 'playing', source);
  }
});

test('failures after the answer finish the endpoint with endpoint.file.finished {reason: error}: a body that stalls past timeout_ms, one that grows past the cap, one that is not a WAV', async (t) => {
  const srv = await serve(t, (req, res) => {
    if (req.url === '/stall') {
      res.writeHead(200, { 'Content-Length': 50_000 });
      res.write(Buffer.alloc(1000)); // then nothing
    } else if (req.url === '/endless') {
      res.writeHead(200); // chunked, no length
      const more = (): void => {
        if (!res.destroyed) res.write(Buffer.alloc(16_384), (err) => !err && setImmediate(more));
      };
      more();
    } else res.writeHead(200, { 'Content-Type': 'audio/wav' }).end('this is not a wav file at all, but long enough to probe');
  });
  const { c } = await bridgeSession(t, url({ fileOrigins: [srv.origin], fileNetworks: parseCidrList('127.0.0.1/32'), fileMaxBytes: 200_000 }));
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ source: `${srv.origin}/stall`, timeout_ms: 500 }, /no complete answer within timeout_ms 500/],
    [{ source: `${srv.origin}/endless` }, /grew past 200000 bytes/],
    [{ source: `${srv.origin}/text.wav` }, /not a WAV file/],
  ];
  for (const [params, expected] of cases) {
    const finished = c.waitFor('endpoint.file.finished', (e) => e.reason === 'error' && expected.test(String(e.error ?? '')), 5000);
    const made = await c.call('endpoint.create_file', params as { source: string });
    t.is(made.state, 'buffering');
    const done = await finished;
    t.is(String(done.endpoint_id), String(made.endpoint_id));
    t.is(done.reason, 'error');
    t.regex(String(done.error ?? ''), expected);
    const info = (await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === made.endpoint_id)!;
    t.like(info, { state: 'finished', direction: 'inactive' });
    t.regex(String(info.error), expected);
    t.regex(await outcome(c.call('endpoint.file.resume', { endpoint_id: made.endpoint_id })), /^ENDPOINT_ERROR: .*has finished/);
  }
});
