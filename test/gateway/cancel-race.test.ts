/**
 * An application's answer crossing the caller's CANCEL: the gateway answers with a cast
 * (`answer`), so when the CANCEL wins at the SIP server the 200 is dropped there and the
 * `sip.cancelled` it sent must end the call the gateway already counted as answered. Thirty
 * INVITEs from a raw UDP peer, each CANCELled in the same turn as the application answers it
 * (in either order, with small offsets): every call gets 200 or 487, the application hears
 * `sip.cancelled` for every 487, and no call is left behind.
 */
import test from 'ava';
import dgram from 'node:dgram';
import { SDP, startGateway, until } from '../helpers/gateway.js';

const CALLS = 30;

interface Leg {
  callId: string;
  branch: string;
  finals: number[];
}

test('an answer crossing a CANCEL: every call ends (200 then BYE, or 487 and sip.cancelled), none left behind', async (t) => {
  t.timeout(60_000);
  const h = await startGateway(t);
  const app = await h.connect();
  await app.call('route.register', { routes: [{ match: 'exact', value: 'alice' }] });
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  t.teardown(() => sock.close());
  const local = sock.address().port;
  const legs = new Map<string, Leg>();
  const head = (leg: Leg, method: string, cseq: number, branch = leg.branch, toTag = '') =>
    [
      `${method} sip:alice@127.0.0.1:${h.sipPort} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=${branch};rport`,
      `From: <sip:peer@127.0.0.1>;tag=p-${leg.branch.slice(8)}`,
      `To: <sip:alice@127.0.0.1:${h.sipPort}>${toTag ? `;tag=${toTag}` : ''}`,
      `Call-ID: ${leg.callId}`,
      `CSeq: ${cseq} ${method}`,
      'Max-Forwards: 70',
      `Contact: <sip:peer@127.0.0.1:${local}>`,
    ].join('\r\n');
  const send = (text: string) => sock.send(Buffer.from(text, 'latin1'), h.sipPort, '127.0.0.1');
  const byeAnswered = new Set<string>();
  sock.on('message', (m) => {
    const text = m.toString('latin1');
    const status = Number(/^SIP\/2\.0 (\d{3})/.exec(text)?.[1]);
    const callId = /^Call-ID: (.*)$/im.exec(text)?.[1]?.trim() ?? '';
    const method = /^CSeq: \d+ (\w+)/im.exec(text)?.[1];
    const leg = legs.get(callId);
    if (!leg || status < 200) return;
    if (method === 'BYE') return void (status === 200 && byeAnswered.add(callId));
    if (method !== 'INVITE') return;
    const toTag = /^To: .*;tag=([^;\s]+)/im.exec(text)?.[1] ?? '';
    leg.finals.push(status);
    if (status === 200) {
      // ACK (a new branch) and BYE; a retransmitted 200 is ACKed again
      send(`${head(leg, 'ACK', 1, `${leg.branch}-ack${leg.finals.length}`, toTag)}\r\nContent-Length: 0\r\n\r\n`);
      if (leg.finals.length === 1) send(`${head(leg, 'BYE', 2, `${leg.branch}-bye`, toTag)}\r\nContent-Length: 0\r\n\r\n`);
    } else {
      send(`${head(leg, 'ACK', 1, leg.branch, toTag)}\r\nContent-Length: 0\r\n\r\n`); // same branch: the non-2xx ACK
    }
  });

  const answeredThenCancelled: string[] = [];
  const answered = new Set<string>();
  const cancelled = new Set<string>();
  app.on('sip.cancelled', (d) => {
    cancelled.add(String(d.callId));
    if (answered.has(String(d.callId))) answeredThenCancelled.push(String(d.callId));
  });
  let n = 0;
  app.requests$.subscribe((r) => {
    if (r.method !== 'sip.invite') return;
    const callId = String((r.params as { callId: string }).callId);
    const leg = legs.get(callId)!;
    const cancel = () => send(`${head(leg, 'CANCEL', 1)}\r\nContent-Length: 0\r\n\r\n`);
    const answer = () => {
      answered.add(callId);
      app.answer(r.id, { action: 'answer', sdp: SDP });
    };
    // which goes first, and by how much, changes from call to call
    const k = n++ % 6;
    if (k === 0) (cancel(), answer());
    else if (k === 1) (answer(), cancel());
    else if (k === 2) (cancel(), setImmediate(answer));
    else if (k === 3) (answer(), setImmediate(cancel));
    else if (k === 4) (cancel(), setTimeout(answer, 1));
    else (answer(), setTimeout(cancel, 1));
  });

  for (let i = 0; i < CALLS; i++) {
    const leg: Leg = { callId: `race-${i}-${Date.now()}@test`, branch: `z9hG4bK-race-${i}-${Date.now()}`, finals: [] };
    legs.set(leg.callId, leg);
    send(`${head(leg, 'INVITE', 1)}\r\nContent-Type: application/sdp\r\nContent-Length: ${SDP.length}\r\n\r\n${SDP}`);
    await until(() => leg.finals.length > 0, 10_000, `a final answer to ${leg.callId}`);
  }
  const all = [...legs.values()];
  const ok = all.filter((l) => l.finals[0] === 200);
  const gone = all.filter((l) => l.finals[0] === 487);
  t.is(ok.length + gone.length, CALLS, JSON.stringify(all.map((l) => l.finals)));
  await until(() => ok.every((l) => byeAnswered.has(l.callId)), 10_000, 'every BYE answered');
  await until(() => gone.every((l) => cancelled.has(l.callId)), 10_000, 'sip.cancelled for every 487');
  // within a few seconds, not at a timeout: no call of either kind is kept
  await until(async () => (await h.healthz()).body.calls === 0, 5_000, 'calls back to 0').catch(async (err: Error) => {
    t.log('calls left:', JSON.stringify(await app.call('sip.calls', {})), JSON.stringify(all.map((l) => [l.callId, l.finals])), [...answered].length, [...cancelled].length, answeredThenCancelled.length);
    throw err;
  });
  t.log(`${ok.length} answered (200), ${gone.length} cancelled (487); the application had answered before its sip.cancelled in ${answeredThenCancelled.length}`);
});
