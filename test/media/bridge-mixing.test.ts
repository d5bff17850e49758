/**
 * Three or more sources are mixed per destination; an outgoing stream keeps one SSRC and
 * continuous sequence numbers and timestamps while its sources change; RTCP reports flow
 * both ways.
 */
import test from 'ava';
import { buildReceiverReport, parseRtcp } from '../../protocols/media/rtcp.js';
import { goertzelPower } from '../helpers/audio.js';
import { leg, RtpPeer, sleep, bridgeSession } from '../helpers/media.js';

test('a leg that hears two others gets both mixed; each source hears only the others', async (t) => {
  const { c } = await bridgeSession(t);
  const [a, b, d] = await Promise.all([RtpPeer.open(t), RtpPeer.open(t), RtpPeer.open(t)]);
  const legA = await leg(c, a);
  const legB = await leg(c, b);
  const legD = await leg(c, d, { direction: 'recvonly' });
  const info = await c.call('session.info', {});
  t.deepEqual(info.routes.find((r) => r.destination === legD.id), { destination: legD.id, sources: [legA.id, legB.id], mode: 'mix' });
  await Promise.all([a.sendSine(legA.bridge, { freq: 500, ms: 1500, ssrc: 11 }), b.sendSine(legB.bridge, { freq: 1300, ms: 1500, ssrc: 22 })]);
  await sleep(200);
  const heard = d.decodedPcmu(10);
  const floor = goertzelPower(heard, 8000, 2700);
  t.true(goertzelPower(heard, 8000, 500) > 100 * floor, 'D hears A');
  t.true(goertzelPower(heard, 8000, 1300) > 100 * floor, 'D hears B');
  const atA = a.decodedPcmu(10);
  t.true(goertzelPower(atA, 8000, 1300) > 100 * goertzelPower(atA, 8000, 500), 'A hears B, not itself');
});

test('an outgoing stream keeps its SSRC, sequence and timestamp through source changes', async (t) => {
  const { c } = await bridgeSession(t);
  const [a, b, d] = await Promise.all([RtpPeer.open(t), RtpPeer.open(t), RtpPeer.open(t)]);
  const legA = await leg(c, a, { direction: 'sendonly' });
  const legD = await leg(c, d, { direction: 'recvonly' });
  await a.sendSine(legA.bridge, { freq: 500, ms: 400, ssrc: 1 }); // forwarded
  await c.call('endpoint.remove', { endpoint_id: legA.id });
  const tone = await c.call('endpoint.create_tone', { tone: 'sine', frequency: 700, duration_ms: 400 }); // generated
  await c.waitFor('endpoint.tone.finished');
  await c.call('endpoint.remove', { endpoint_id: tone.endpoint_id });
  const legB = await leg(c, b, { direction: 'sendonly' });
  await b.sendSine(legB.bridge, { freq: 900, ms: 400, ssrc: 2, seq: 60000 }); // forwarded again, another SSRC and sequence
  await sleep(150);
  const r = d.received;
  t.true(r.length >= 55, `${r.length} packets`);
  t.is(new Set(r.map((p) => p.ssrc)).size, 1, 'one SSRC throughout');
  for (let i = 1; i < r.length; i++) t.is(r[i]!.seq, (r[i - 1]!.seq + 1) & 0xffff, `sequence continues at packet ${i}`);
  const jumps = r.slice(1).map((p, i) => (p.ts - r[i]!.ts) >>> 0).filter((s) => s !== 160);
  t.deepEqual(jumps, [], 'the timestamp advances one frame per packet, across both source changes');
  t.is(r.filter((p) => p.marker).length, 3, 'the marker bit flags the start of each source');
});

test('RTCP: the bridge sends sender reports with a block for the peer, and takes the peer\'s reports', async (t) => {
  const { c } = await bridgeSession(t);
  const a = await RtpPeer.open(t);
  const legA = await leg(c, a, { mux: true });
  const rtcp: Buffer[] = [];
  a.socket.on('message', (m) => {
    if (m[1]! >= 200 && m[1]! <= 201) rtcp.push(m);
  });
  await c.call('endpoint.create_tone', { tone: 'silence' });
  const sending = a.sendSine(legA.bridge, { freq: 500, ms: 6000, ssrc: 0x5151 });
  a.socket.send(buildReceiverReport({ ssrc: 0x5151, reports: [] }), legA.bridge.port, legA.bridge.address);
  await sending;
  const reports = rtcp.map((m) => parseRtcp(m)).filter((p) => p !== null).flat();
  const sr = reports.find((p) => p.type === 'sr');
  t.truthy(sr, `reports: ${JSON.stringify(reports)}`);
  if (sr?.type !== 'sr') return;
  t.is(sr.ssrc, a.received[0]!.ssrc, 'from the SSRC of the stream it describes');
  t.true(sr.packetCount > 100);
  t.is(sr.reports[0]?.ssrc, 0x5151, 'a report block for the peer\'s stream');
  t.is(sr.reports[0]?.cumulativeLost, 0);
  const ep = (await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === legA.id)!;
  t.true(((ep.counters as Record<string, number>).rtcpIn ?? 0) >= 1, 'the peer\'s report was taken');
});

test('a peer that switches to another agreed codec is transcoded for a leg it was forwarded to', async (t) => {
  const { c } = await bridgeSession(t);
  const [a, b] = await Promise.all([RtpPeer.open(t), RtpPeer.open(t)]);
  const both = ['0 PCMU/8000', '8 PCMA/8000'];
  const legA = await leg(c, a, { codecs: both, direction: 'sendonly' });
  const legB = await leg(c, b, { codecs: both, direction: 'recvonly' });
  t.is((await c.call('session.info', {})).routes.find((r) => r.destination === legB.id)!.mode, 'forward');
  await a.sendSine(legA.bridge, { freq: 600, ms: 600, pt: 0, ssrc: 5 });
  await a.sendSine(legA.bridge, { freq: 600, ms: 600, pt: 8, ssrc: 5, seq: 2000 });
  await sleep(200);
  const forwarded = b.received.length;
  t.true(forwarded >= 55, `${forwarded} packets: the PCMA half reached B too`);
  t.true(b.received.every((p) => p.pt === 0), 'all in PCMU, the send codec B negotiated');
  const f = goertzelPower(b.decodedPcmu(35), 8000, 600);
  t.true(f > 100 * goertzelPower(b.decodedPcmu(35), 8000, 1500), 'the transcoded half is the same tone');
});
