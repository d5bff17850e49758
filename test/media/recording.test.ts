/**
 * recording.start / recording.stop against a real bridge: RTP peers on UDP sockets send real
 * RTP (and SRTP) to the bridge; the PCAP it writes is read back with protocols/media/pcap.ts
 * (and with tshark when it is installed): the packets, their count, their tuples and their
 * timestamps on the clock of `removed_at_epoch_ms`. The stops nobody asked for (endpoint
 * removed, transfer, session destroyed, a full disk on a real tmpfs) each give recording.stopped.
 */
import test, { type ExecutionContext } from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPcap, type PcapPacket } from '../../protocols/media/pcap.js';
import { parseRtp } from '../../protocols/media/rtp.js';
import type { SrtpSuite } from '../../protocols/media/types.js';
import { MediaBridgeError } from '../../actors/media-bridge/client.js';
import { RtpPeer, bridgeSession, leg, outcome, sleep, srtpSender } from '../helpers/media.js';

function recordingsDir(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-rec-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function packetsOf(t: ExecutionContext, path: string): PcapPacket[] {
  const r = readPcap(readFileSync(path));
  if (!r.ok) {
    t.fail(r.error);
    return [];
  }
  t.false(r.truncated, 'the file ends on a whole record');
  return r.packets;
}

const rtpOf = (p: PcapPacket) => parseRtp(p.payload);

/** A bridge recording into a fresh directory, a session, and two plain RTP legs: A's peer sends to B's. */
async function twoLegs(t: ExecutionContext) {
  const dir = recordingsDir(t);
  const { c } = await bridgeSession(t, { recordingDir: dir });
  const a = await RtpPeer.open(t);
  const b = await RtpPeer.open(t);
  const legA = await leg(c, a);
  await leg(c, b);
  return { dir, c, a, b, legA };
}

test('an endpoint recording holds every packet its peer sent, in order, stamped on the clock of removed_at_epoch_ms; removing the endpoint stops it', async (t) => {
  const { dir, c, a, b, legA } = await twoLegs(t);
  const started = await c.call('recording.start', { endpoint_id: legA.id, file_name: 'leg-a.pcap' });
  t.is(started.file_path, join(dir, 'leg-a.pcap'));
  t.is(started.endpoint_id, legA.id);
  const firstSend = Date.now();
  t.true(started.started_at_epoch_ms <= firstSend);
  await a.sendSine(legA.bridge, { freq: 440, ms: 1000, seq: 500 });
  const lastSend = Date.now();
  await b.waitFor(50);
  const info = await c.call('session.info', {});
  t.is(info.recordings?.length, 1);
  t.is(info.recordings?.[0]?.recording_id, started.recording_id);
  // The peer stops, then the endpoint is removed: the recording stops by itself.
  await sleep(100);
  const stopped = c.waitFor('recording.stopped');
  const { removed_at_epoch_ms } = await c.call('endpoint.remove', { endpoint_id: legA.id });
  const ev = await stopped;
  t.is(ev.reason, 'endpoint_removed');
  t.is(ev.recording_id, started.recording_id);
  t.is(ev.packets, 50);
  t.is(ev.dropped_packets, 0);
  const packets = packetsOf(t, started.file_path);
  t.is(packets.length, 50, 'one record per packet the peer sent');
  t.is(ev.bytes, readFileSync(started.file_path).length);
  t.deepEqual(packets.map((p) => rtpOf(p)?.sequenceNumber), Array.from({ length: 50 }, (_, i) => 500 + i));
  t.true(packets.every((p) => p.srcAddress === '127.0.0.1' && p.srcPort === a.port && p.dstPort === legA.bridge.port), 'the real tuple: peer → endpoint');
  const times = packets.map((p) => p.epochMs);
  t.true(times.every((x, i) => i === 0 || x >= times[i - 1]!), 'monotonic');
  t.true(times[0]! >= firstSend - 1 && times.at(-1)! <= lastSend + 50, `stamped at arrival: ${times[0]! - firstSend} ms after the first send, ${times.at(-1)! - lastSend} ms after the last`);
  // The same clock: the last packet came ~100 ms before the removal, never after it.
  const gap = removed_at_epoch_ms - times.at(-1)!;
  t.true(gap >= 90 && gap < 400, `removed_at_epoch_ms is ${gap} ms after the last packet's pcap timestamp`);
  t.is((await c.call('session.info', {})).recordings?.length, 0);
  t.regex(await outcome(c.call('recording.stop', { recording_id: started.recording_id })), /^ENDPOINT_ERROR: .*no recording/, 'a recording that stopped by itself is gone');
  // tshark (Debian's) opens the file too, decodes the records as RTP, and reads the same times.
  const out = execFileSync('tshark', ['-r', started.file_path, '-d', `udp.port==${legA.bridge.port},rtp`, '-T', 'fields', '-e', 'rtp.seq', '-e', 'frame.time_epoch', '-e', 'udp.srcport']).toString().trim().split('\n');
  t.is(out.length, 50);
  t.deepEqual(out.map((l) => Number(l.split('\t')[0])), Array.from({ length: 50 }, (_, i) => 500 + i));
  t.true(out.every((l, i) => Math.abs(Number(l.split('\t')[1]) * 1000 - times[i]!) < 1), 'tshark reads the same timestamps');
  t.is(Number(out[0]!.split('\t')[2]), a.port);
});

test('SRTP in, plaintext RTP in the PCAP; recording.stop answers with the counts; a session recording hears every leg, with the native path held off', async (t) => {
  const dir = recordingsDir(t);
  const { c } = await bridgeSession(t, { recordingDir: dir });
  const a = await RtpPeer.open(t);
  const b = await RtpPeer.open(t);
  const k = { suite: 'AES_CM_128_HMAC_SHA1_80' as SrtpSuite, key: randomBytes(30) };
  const legA = await leg(c, a, { crypto: k });
  const legB = await leg(c, b);
  const whole = await c.call('recording.start', {});
  t.is(whole.endpoint_id, null);
  t.is(whole.file_path, join(dir, `${whole.recording_id}.pcap`));
  const sent: Buffer[] = [];
  const sender = srtpSender(k);
  const protect = sender.protectRtp.bind(sender);
  sender.protectRtp = (p: Uint8Array) => {
    sent.push(Buffer.from(p));
    return protect(p);
  };
  await Promise.all([a.sendSine(legA.bridge, { freq: 700, ms: 2000, srtp: sender, ssrc: 0xa }), b.sendSine(legB.bridge, { freq: 300, ms: 2000, ssrc: 0xb })]);
  await sleep(150);
  const done = await c.call('recording.stop', { recording_id: whole.recording_id });
  t.is(done.dropped_packets, 0);
  const packets = packetsOf(t, whole.file_path);
  t.is(done.packets, packets.length);
  const fromA = packets.filter((p) => p.dstPort === legA.bridge.port && rtpOf(p)?.ssrc === 0xa);
  const fromB = packets.filter((p) => p.dstPort === legB.bridge.port && rtpOf(p)?.ssrc === 0xb);
  t.is(fromA.length, 100, 'every SRTP packet, though a single forward target would have put it on the native path');
  t.is(fromB.length, 100);
  t.true(fromA.every((p, i) => p.payload.equals(sent[i]!)), 'the plaintext the peer protected, byte for byte (no auth tag)');
  t.is(done.duration_ms, done.stopped_at_epoch_ms - done.started_at_epoch_ms);
  t.regex(await outcome(c.call('recording.stop', { recording_id: whole.recording_id })), /^ENDPOINT_ERROR: .*no recording/, 'stopped twice');
  // With no recording the stream goes native again.
  await a.sendSine(legA.bridge, { freq: 700, ms: 400, srtp: sender, ssrc: 0xa, seq: 2000 });
  const info = await c.call('session.info', {});
  t.is((info.endpoints.find((e) => e.endpoint_id === legA.id)?.native_path as { source?: boolean } | null)?.source, true, 'the native rule is set again');
});

test('a transfer stops the endpoint\'s recording with recording.stopped (spec: transfer rule 2); the session recording of the target hears it', async (t) => {
  const dir = recordingsDir(t);
  const { bridge, c } = await bridgeSession(t, { recordingDir: dir });
  const c2 = await bridge.connect();
  const s2 = await c2.call('session.create', {});
  const a = await RtpPeer.open(t);
  const legA = await leg(c, a);
  const rec = await c.call('recording.start', { endpoint_id: legA.id });
  const there = await c2.call('recording.start', { endpoint_id: null, file_name: 'target.pcap' });
  await a.sendSine(legA.bridge, { freq: 500, ms: 200, seq: 1 });
  await sleep(50);
  const stopped = c.waitFor('recording.stopped');
  await c.call('endpoint.transfer', { endpoint_id: legA.id, target_session_id: s2.session_id });
  const ev = await stopped;
  t.is(ev.reason, 'transferred');
  t.is(ev.endpoint_id, legA.id);
  t.is(ev.packets, 10);
  t.is(packetsOf(t, rec.file_path).length, 10);
  await a.sendSine(legA.bridge, { freq: 500, ms: 200, seq: 100 });
  await sleep(100);
  const after = await c2.call('recording.stop', { recording_id: there.recording_id });
  t.deepEqual(packetsOf(t, after.file_path!).map((p) => rtpOf(p)?.sequenceNumber), Array.from({ length: 10 }, (_, i) => 100 + i), 'the moved endpoint is heard by the target\'s session recording');
});

test('session.destroy stops its recordings: the file is whole when destroy answers, and recording.stopped reaches the owner', async (t) => {
  const dir = recordingsDir(t);
  const { c } = await bridgeSession(t, { recordingDir: dir });
  const a = await RtpPeer.open(t);
  const legA = await leg(c, a);
  const rec = await c.call('recording.start', { endpoint_id: legA.id });
  await a.sendSine(legA.bridge, { freq: 500, ms: 300 });
  await sleep(50);
  const stopped = c.waitFor('recording.stopped');
  await c.call('session.destroy', {});
  t.is(packetsOf(t, rec.file_path).length, 15);
  const ev = await stopped;
  t.is(ev.reason, 'session_destroyed', 'the owner hears why, though the session is gone');
  t.is(ev.recording_id, rec.recording_id);
  t.is(ev.packets, 15);
});

test('refusals: recording off, bad and taken file names, unknown or non-RTP endpoints, unknown recording, an unwritable directory', async (t) => {
  const off = await bridgeSession(t);
  t.regex(await off.c.call('recording.start', {}).then(() => 'ok', (e: MediaBridgeError) => `${e.code}: ${e.message}`), /^ENDPOINT_ERROR: .*recording is off.*MEDIA_RECORDING_DIR/);
  const dir = recordingsDir(t);
  const { c } = await bridgeSession(t, { recordingDir: dir });
  const why = (p: Promise<unknown>) => p.then(() => 'ok', (e: MediaBridgeError) => `${e.code}: ${e.message}`);
  for (const name of ['../x.pcap', 'a/b.pcap', '.hidden', '..']) t.regex(await why(c.call('recording.start', { file_name: name })), /^INVALID_PARAMS: .*file_name .* is not a plain file name/, name);
  t.regex(await why(c.call('recording.start', { file_name: 'x'.repeat(10_000) })), /^INVALID_PARAMS: .*.*file_name.*longer than 200/);
  writeFileSync(join(dir, 'taken.pcap'), 'keep me');
  t.regex(await why(c.call('recording.start', { file_name: 'taken.pcap' })), /^ENDPOINT_ERROR: .*cannot create recording file .*EEXIST/);
  t.is(readFileSync(join(dir, 'taken.pcap'), 'utf8'), 'keep me', 'an existing file is never overwritten');
  mkdirSync(join(dir, 'sub'));
  t.regex(await why(c.call('recording.start', { file_name: 'sub' })), /^ENDPOINT_ERROR: .*cannot create recording file/);
  t.regex(await why(c.call('recording.start', { endpoint_id: 'nope' })), /^ENDPOINT_ERROR: .*no endpoint nope/);
  const tone = await c.call('endpoint.create_tone', { tone: 'beep' });
  t.regex(await why(c.call('recording.start', { endpoint_id: tone.endpoint_id })), /^ENDPOINT_ERROR: .*.* is a tone endpoint/);
  t.regex(await why(c.call('recording.stop', { recording_id: 'r-unknown' })), /^ENDPOINT_ERROR: .*no recording r-unknown/);
  t.regex(await why(c.call('recording.stop', {} as never)), /^INVALID_PARAMS: .*recording_id/);
  // A directory that turned read-only (a real read-only mount: root ignores file modes).
  const ro = mkdtempSync(join(tmpdir(), 'hostd-rec-ro-'));
  t.teardown(() => {
    spawnSync('umount', [ro]);
    rmSync(ro, { recursive: true, force: true });
  });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,ro', 'tmpfs', ro]);
  const roBridge = await bridgeSession(t, { recordingDir: ro });
  t.regex(await why(roBridge.c.call('recording.start', {})), /^ENDPOINT_ERROR: .*cannot create recording file .*EROFS/);
  t.deepEqual((await c.call('session.info', {})).recordings, [], 'nothing was left running');
});

test('a full disk (a 16 KiB tmpfs) stops the recording with recording.stopped io_error; the media keeps flowing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-rec-full-'));
  t.teardown(() => {
    spawnSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', dir]);
  const { c } = await bridgeSession(t, { recordingDir: dir });
  const a = await RtpPeer.open(t);
  const b = await RtpPeer.open(t);
  const legA = await leg(c, a);
  await leg(c, b);
  const rec = await c.call('recording.start', { endpoint_id: legA.id });
  const stopped = c.waitFor('recording.stopped');
  const sending = a.sendSine(legA.bridge, { freq: 600, ms: 3000 });
  const ev = await stopped;
  t.is(ev.reason, 'io_error');
  t.regex(ev.error ?? '', /ENOSPC|short write/);
  t.true(ev.packets > 20 && ev.packets < 150, `${ev.packets} packets fit`);
  await sending;
  await sleep(100);
  t.true(b.received.length >= 145, `the other leg heard ${b.received.length} of 150 packets`);
  const read = readPcap(readFileSync(rec.file_path));
  t.true(read.ok && read.packets.length <= ev.packets && read.packets.length > 20, 'what was written reads back');
  t.true(existsSync(rec.file_path));
});

test('a write queue of one packet drops a burst\'s excess and counts it: written + dropped = received', async (t) => {
  const dir = recordingsDir(t);
  const { c } = await bridgeSession(t, { recordingDir: dir, recordingQueuePackets: 1 });
  const a = await RtpPeer.open(t);
  const legA = await leg(c, a);
  const rec = await c.call('recording.start', { endpoint_id: legA.id });
  const { buildRtp } = await import('../../protocols/media/rtp.js');
  for (let i = 0; i < 300; i++) a.socket.send(buildRtp({ marker: false, payloadType: 0, sequenceNumber: i, timestamp: i * 160, ssrc: 9 }, Buffer.alloc(160, 0xff)), legA.bridge.port, '127.0.0.1');
  await sleep(500);
  const info = (await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === legA.id)!;
  const received = (info.counters as { packetsIn: number }).packetsIn;
  const done = await c.call('recording.stop', { recording_id: rec.recording_id });
  t.is(done.packets + done.dropped_packets, received);
  t.true(done.dropped_packets > 0, `${done.dropped_packets} dropped of ${received}`);
  t.is(packetsOf(t, done.file_path!).length, done.packets);
});

test('a recording started on a stream the native path carries records every packet from then on, and the stream stays whole', async (t) => {
  const { dir, c, a, b, legA } = await twoLegs(t);
  const sending = a.sendSine(legA.bridge, { freq: 900, ms: 3000, seq: 0 });
  const native = async () => ((await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === legA.id)?.native_path as { source: boolean } | null)?.source;
  let deadline = Date.now() + 2000;
  while (!(await native()) && Date.now() < deadline) await sleep(50);
  t.true(await native(), 'forwarded natively before the recording');
  const rec = await c.call('recording.start', { endpoint_id: legA.id });
  t.false(await native(), 'a recorded source is not on the native path');
  await sleep(800);
  const done = await c.call('recording.stop', { recording_id: rec.recording_id });
  const seqs = packetsOf(t, done.file_path!).map((p) => rtpOf(p)!.sequenceNumber);
  // 40 are sent in 800 ms; a loaded machine delays the test's own sender, so fewer is fine here:
  // what this test is about is the next line (no gap).
  t.true(seqs.length >= 10, `${seqs.length} packets in 800 ms`);
  t.deepEqual(seqs, Array.from({ length: seqs.length }, (_, i) => seqs[0]! + i), 'no gap: no packet went around the tap');
  deadline = Date.now() + 2000;
  while (!(await native()) && Date.now() < deadline) await sleep(50);
  t.true(await native(), 'native again once the recording stopped');
  await sending;
  await sleep(100);
  t.true(b.received.length >= 148, `B heard ${b.received.length} of 150`);
});
