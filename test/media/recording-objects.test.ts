/**
 * Recordings stored as objects: a real object store (six loop volumes) and the media bridge in one
 * actor system, as the daemon runs them. A finished recording (stopped, or ended by the session's
 * destruction) is PUT to `<MEDIA_RECORDING_BUCKET>/<session_id>/<file>`, read back from the store
 * byte for byte (a PCAP whose packets are the ones the RTP peer sent), and the local file is gone.
 * What the store refuses (an existing path) and a daemon without a store leave the file local with
 * `store_error`. The settings' refusals too.
 */
import test from 'ava';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPcap } from '../../protocols/media/pcap.js';
import { parseRtp } from '../../protocols/media/rtp.js';
import { resolve } from '../../runtime/config/settings.js';
import { MediaBridgeClient } from '../../actors/media-bridge/client.js';
import { BRIDGE_ID, type BridgeProtocol } from '../../actors/media-bridge/messages.js';
import { BRIDGE_MODULE, bridgeArgs, mediaSettings, type MediaValues } from '../../actors/media/service.js';
import { startStore, type Store } from '../objstore/harness.js';
import { RtpPeer, bridgeSession, leg, sleep } from '../helpers/media.js';
import type { ExecutionContext } from 'ava';

function recordingsDir(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-recobj-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The bridge started in the store's actor system (as `hostd daemon` runs both); a client on it. */
async function bridgeBesideStore(t: ExecutionContext, store: Store, values: Partial<MediaValues>): Promise<MediaBridgeClient> {
  const base = 20000 + Math.floor(Math.random() * 40) * 1000;
  const args = bridgeArgs({ ...resolve(mediaSettings, {}, {}), port: 0, rtpPortMin: base, rtpPortMax: base + 999, ...values });
  await store.system.start({ id: 'media.supervisor', children: [{ id: BRIDGE_ID, module: BRIDGE_MODULE, args }] });
  const info = await store.system.ref<BridgeProtocol>(BRIDGE_ID).request({ type: 'info' });
  const c = await MediaBridgeClient.connect(`ws://127.0.0.1:${info.port}/`);
  t.teardown(() => c.close().catch(() => undefined));
  return c;
}

test('a stopped recording is an object in the store: its PCAP read back holds the packets sent, the local file is gone; a destroyed session\'s recording too, told in recording.stopped', async (t) => {
  const store = await startStore(t);
  const dir = recordingsDir(t);
  const c = await bridgeBesideStore(t, store, { recordingDir: dir, recordingBucket: 'recordings' });
  const { session_id } = await c.call('session.create', {});
  const a = await RtpPeer.open(t);
  const legA = await leg(c, a);
  const rec = await c.call('recording.start', { endpoint_id: legA.id, file_name: 'call-a.pcap' });
  t.is(rec.file_path, join(dir, 'call-a.pcap'), 'written locally while it runs');
  await a.sendSine(legA.bridge, { freq: 440, ms: 400, seq: 7000 });
  await sleep(100);
  const done = await c.call('recording.stop', { recording_id: rec.recording_id });
  t.log('recording.stop answered', JSON.stringify(done));
  t.is(done.object_path, `recordings/${session_id}/call-a.pcap`);
  t.regex(done.object_id ?? '', /^\$[0-9a-f]{16,}$/, 'the store\'s object id ($ and hex)');
  t.is(done.file_path, undefined, 'no local path: the file is the store\'s now');
  t.is(done.store_error, undefined);
  t.false(existsSync(join(dir, 'call-a.pcap')), 'the local file is deleted once stored');

  const res = await fetch(`${store.url}/${done.object_path}`);
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'application/vnd.tcpdump.pcap');
  t.is(res.headers.get('x-object-id'), done.object_id ?? null);
  const bytes = Buffer.from(await res.arrayBuffer());
  t.is(bytes.length, done.bytes);
  t.is(res.headers.get('content-md5'), createHash('md5').update(bytes).digest('hex'));
  const pcap = readPcap(bytes);
  if (!pcap.ok) return t.fail(pcap.error);
  t.is(pcap.packets.length, 20);
  t.is(done.packets, 20);
  t.deepEqual(
    pcap.packets.map((p) => parseRtp(p.payload)?.sequenceNumber),
    Array.from({ length: 20 }, (_, i) => 7000 + i),
  );

  // Destroying the session stops a running recording: stored too, and the owner is told where.
  const whole = await c.call('recording.start', {});
  await a.sendSine(legA.bridge, { freq: 440, ms: 200, seq: 8000 });
  await sleep(100);
  const stopped = c.waitFor('recording.stopped', (e) => e.recording_id === whole.recording_id, 20_000);
  await c.call('session.destroy', {});
  const ev = await stopped;
  t.is(ev.reason, 'session_destroyed');
  t.is(ev.object_path, `recordings/${session_id}/${whole.recording_id}.pcap`);
  t.is(ev.packets, 10);
  const again = await fetch(`${store.url}/${ev.object_path}`);
  t.is(again.status, 200);
  const r2 = readPcap(Buffer.from(await again.arrayBuffer()));
  t.true(r2.ok && r2.packets.length === 10);
  t.false(existsSync(whole.file_path));
});

test('what the store refuses stays local with store_error: an existing object path (409)', async (t) => {
  const store = await startStore(t);
  const dir = recordingsDir(t);
  const c = await bridgeBesideStore(t, store, { recordingDir: dir, recordingBucket: 'recordings' });
  const { session_id } = await c.call('session.create', {});
  // The path the recording will want is taken by another object.
  const put = await fetch(`${store.url}/recordings/${session_id}/taken.pcap`, { method: 'PUT', body: 'not a recording' });
  t.is(put.status, 201);
  const rec = await c.call('recording.start', { file_name: 'taken.pcap' });
  const done = await c.call('recording.stop', { recording_id: rec.recording_id });
  t.is(done.object_path, undefined);
  t.is(done.file_path, join(dir, 'taken.pcap'));
  t.regex(done.store_error ?? '', /answered 409 to PUT recordings\/.*taken\.pcap/);
  t.true(existsSync(join(dir, 'taken.pcap')), 'the recording is kept on the local disk');
  t.is(await (await fetch(`${store.url}/recordings/${session_id}/taken.pcap`)).text(), 'not a recording', 'the object is untouched');
});

test('with no object store in the daemon a recording stays local and says why; the settings refuse a bucket without a directory and a bad bucket name', async (t) => {
  const dir = recordingsDir(t);
  const { c } = await bridgeSession(t, { recordingDir: dir, recordingBucket: 'recordings' });
  const rec = await c.call('recording.start', { file_name: 'alone.pcap' });
  const done = await c.call('recording.stop', { recording_id: rec.recording_id });
  t.is(done.file_path, join(dir, 'alone.pcap'));
  t.regex(done.store_error ?? '', /object store does not answer in this daemon/);
  t.true(existsSync(join(dir, 'alone.pcap')));

  t.throws(() => bridgeArgs({ ...resolve(mediaSettings, {}, {}), recordingBucket: 'recordings' }), { message: /MEDIA_RECORDING_BUCKET recordings needs MEDIA_RECORDING_DIR/ });
  for (const bad of ['$recordings', 'a/b', '..']) {
    t.throws(() => resolve(mediaSettings, {}, { MEDIA_RECORDING_BUCKET: bad }), { message: /MEDIA_RECORDING_BUCKET/ }, bad);
  }
});
