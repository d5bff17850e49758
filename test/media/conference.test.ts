/**
 * Mixing at scale (issue 17): a ten-party conference in one session. Ten RTP peers (UDP sockets
 * of the test), each sending its own sine in PCMU, each hear the mix of the other nine: their own
 * tone absent, every other tone present, and the mixed stream without gaps (one SSRC, every
 * sequence number, the timestamp one frame per packet). About 2 s of audio.
 *
 * The sines are sent at 1/13 of full scale so that nine summed stay below full scale: the mixer
 * saturates at 16 bits, and clipping would put intermodulation products (some near a peer's own
 * frequency) into the mix. The frequencies are not on an even grid for the same reason.
 */
import test from 'ava';
import { buildRtp } from '../../protocols/media/rtp.js';
import { ulawEncode } from '../../protocols/media/codecs/g711.js';
import { dominantFrequency, goertzelPower } from '../helpers/audio.js';
import { bridgeSession, leg, outcome, RtpPeer, sleep } from '../helpers/media.js';

const FREQS = [310, 470, 690, 830, 1070, 1290, 1510, 1730, 2170, 2590];
const AMPLITUDE = 2500;
const MS = 2000;

/**
 * Send every peer's sine, one 20 ms PCMU frame each per tick, paced on the wall clock: a tick
 * that comes late sends the frames that are due, so each stream keeps real time on a loaded machine.
 */
function sendAll(peers: Array<{ peer: RtpPeer; to: { address: string; port: number }; freq: number }>, ms: number): Promise<void> {
  const frames = ms / 20;
  const start = Date.now();
  let sent = 0;
  return new Promise((resolve) => {
    const tick = () => {
      const due = Math.min(frames, Math.floor((Date.now() - start) / 20) + 1);
      for (; sent < due; sent++) {
        for (const [i, p] of peers.entries()) {
          const pcm = new Int16Array(160);
          for (let k = 0; k < 160; k++) pcm[k] = Math.round(AMPLITUDE * Math.sin((2 * Math.PI * p.freq * (sent * 160 + k)) / 8000));
          const packet = buildRtp({ marker: sent === 0, payloadType: 0, sequenceNumber: (100 + sent) & 0xffff, timestamp: (sent * 160) >>> 0, ssrc: 0x7000 + i }, ulawEncode(pcm));
          p.peer.socket.send(packet, p.to.port, p.to.address);
        }
      }
      if (sent >= frames) {
        clearInterval(timer);
        resolve();
      }
    };
    const timer = setInterval(tick, 10);
    tick();
  });
}

test('ten peers in one session: each hears the other nine mixed, not itself, without gaps', async (t) => {
  const { c } = await bridgeSession(t);
  const peers = await Promise.all(FREQS.map(() => RtpPeer.open(t)));
  const legs: Array<Awaited<ReturnType<typeof leg>>> = [];
  for (const p of peers) legs.push(await leg(c, p));
  const info = await c.call('session.info', {});
  t.is(info.endpoints.length, 10);
  for (const [i, l] of legs.entries()) {
    const route = info.routes.find((r) => r.destination === l.id);
    t.is(route?.mode, 'mix', `leg ${i} is mixed`);
    t.deepEqual([...(route?.sources ?? [])].sort(), legs.filter((_, j) => j !== i).map((x) => x.id).sort(), `leg ${i} hears the nine others`);
  }
  await sendAll(peers.map((peer, i) => ({ peer, to: legs[i]!.bridge, freq: FREQS[i]! })), MS);
  await sleep(300);

  for (const [i, peer] of peers.entries()) {
    const r = peer.received;
    const label = `peer ${i} (${FREQS[i]} Hz)`;
    t.true(r.length >= 0.9 * (MS / 20), `${label}: ${r.length} packets of ${MS / 20}`);
    t.is(new Set(r.map((p) => p.ssrc)).size, 1, `${label}: one SSRC`);
    const seqGaps = r.slice(1).filter((p, k) => p.seq !== ((r[k]!.seq + 1) & 0xffff)).length;
    const tsJumps = r.slice(1).filter((p, k) => ((p.ts - r[k]!.ts) >>> 0) !== 160).length;
    t.is(seqGaps, 0, `${label}: every sequence number`);
    t.is(tsJumps, 0, `${label}: the timestamp advances one frame per packet`);
    // The middle of the call: every source is in the mix there.
    const pcm = peer.decodedPcmu(10).subarray(0, 160 * (r.length - 20));
    const own = goertzelPower(pcm, 8000, FREQS[i]!);
    const others = FREQS.filter((_, j) => j !== i).map((f) => ({ f, p: goertzelPower(pcm, 8000, f) }));
    const weakest = others.reduce((a, b) => (b.p < a.p ? b : a));
    t.true(weakest.p > 100 * own, `${label}: each of the nine others at least 20 dB above its own tone (weakest ${weakest.f} Hz ${weakest.p.toFixed(0)}, own ${own.toFixed(0)})`);
    // A sine of peak A has power A²/2; each of the nine is in the mix at its level (±3 dB; PCMU).
    t.true(weakest.p > (AMPLITUDE * AMPLITUDE) / 4, `${label}: the weakest other tone is at its level (${weakest.p.toFixed(0)})`);
    const dominant = dominantFrequency(pcm, 8000);
    t.true(Math.abs(dominant - FREQS[i]!) > 50, `${label}: the strongest component (${dominant.toFixed(0)} Hz) is not its own`);
  }
});

test('the eleventh and later legs of a conference are refused at the session limit, and the ten keep their routes', async (t) => {
  const { c } = await bridgeSession(t, { maxEndpointsPerSession: 10 });
  const peers = await Promise.all(Array.from({ length: 11 }, () => RtpPeer.open(t)));
  for (const p of peers.slice(0, 10)) await leg(c, p);
  const refused = await outcome(leg(c, peers[10]!));
  t.regex(refused, /^LIMIT_EXCEEDED/, refused);
  const info = await c.call('session.info', {});
  t.is(info.endpoints.length, 10, 'nothing half-made');
  t.true(info.routes.every((r) => r.sources.length === 9 && r.mode === 'mix'));
});
