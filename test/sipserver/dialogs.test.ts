/**
 * The UAS core seen from a raw UDP peer: the 2xx is retransmitted until the ACK, the ACK
 * reaches the gateway, and the gateway's own in-dialog request (BYE) goes out through a client
 * transaction with the peer's answer as its reply.
 */
import dgram from 'node:dgram';
import test from 'ava';
import { startSip } from '../helpers/sip.js';

class Peer {
  readonly got: string[] = [];
  private constructor(readonly s: dgram.Socket, readonly port: number) {
    s.on('message', (m) => this.got.push(m.toString('latin1')));
  }

  static async open(t: import('ava').ExecutionContext): Promise<Peer> {
    const s = dgram.createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
    t.teardown(() => s.close());
    return new Peer(s, s.address().port);
  }

  send(text: string, port: number): void {
    this.s.send(Buffer.from(text, 'latin1'), port, '127.0.0.1');
  }

  async waitFor(pred: (m: string) => boolean, ms = 5000): Promise<string> {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      const m = this.got.find(pred);
      if (m) return m;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`nothing matched within ${ms} ms; got ${this.got.map((g) => g.split('\r\n')[0]).join(' | ')}`);
  }
}

const line = (m: string, name: string) => new RegExp(`^${name}: (.*)$`, 'mi').exec(m)?.[1] ?? '';

test('a 2xx is retransmitted until the ACK; the ACK reaches the gateway; a re-INVITE and a stale CSeq in the dialog; the gateway BYEs the peer through a client transaction', async (t) => {
  const h = await startSip(t);
  const peer = await Peer.open(t);
  const callId = `dlg-${Date.now()}@test`;
  const via = `SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bK-dlg-1;rport`;
  const invite = [
    `INVITE sip:alice@127.0.0.1:${h.port} SIP/2.0`,
    `Via: ${via}`,
    'From: <sip:peer@127.0.0.1>;tag=peer1',
    `To: <sip:alice@127.0.0.1:${h.port}>`,
    `Call-ID: ${callId}`,
    'CSeq: 1 INVITE',
    'Max-Forwards: 70',
    `Contact: <sip:peer@127.0.0.1:${peer.port}>`,
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
  peer.send(invite, h.port);
  const ok = await peer.waitFor((m) => m.startsWith('SIP/2.0 200'));
  t.regex(line(ok, 'Content-Type'), /application\/sdp/);
  t.regex(line(ok, 'Contact'), new RegExp(`<sip:127\\.0\\.0\\.1:${h.port}>`));
  const toTag = /;tag=([^;\s]+)/.exec(line(ok, 'To'))?.[1];
  t.truthy(toTag);
  const ringing = peer.got.find((m) => m.startsWith('SIP/2.0 180'));
  t.is(/;tag=([^;\s]+)/.exec(line(ringing ?? '', 'To'))?.[1], toTag, 'one To tag for every response of the transaction');
  // No ACK yet: the 200 comes again at T1 (500 ms) and 2·T1 later.
  await new Promise((r) => setTimeout(r, 1700));
  const oks = peer.got.filter((m) => m.startsWith('SIP/2.0 200')).length;
  t.true(oks >= 3, `200 sent ${oks} times in 1.7 s`);
  peer.send(
    [`ACK sip:127.0.0.1:${h.port} SIP/2.0`, `Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bK-dlg-ack;rport`, 'From: <sip:peer@127.0.0.1>;tag=peer1', `To: <sip:alice@127.0.0.1:${h.port}>;tag=${toTag}`, `Call-ID: ${callId}`, 'CSeq: 1 ACK', 'Max-Forwards: 70', 'Content-Length: 0', '', ''].join('\r\n'),
    h.port,
  );
  await new Promise((r) => setTimeout(r, 2500));
  const after = peer.got.filter((m) => m.startsWith('SIP/2.0 200')).length;
  t.true(after <= oks + 1, 'retransmissions stop once the ACK is in');
  const s = await h.gw.request({ type: 'stats' });
  t.is(s.acks, 1);
  t.is(s.openDialogs.length, 1);
  // A re-INVITE from the peer reaches the gateway in the dialog; its 200 is ACKed like the first.
  peer.got.length = 0;
  const dialogHeaders = ['From: <sip:peer@127.0.0.1>;tag=peer1', `To: <sip:alice@127.0.0.1:${h.port}>;tag=${toTag}`, `Call-ID: ${callId}`, 'Max-Forwards: 70'];
  peer.send([`INVITE sip:127.0.0.1:${h.port} SIP/2.0`, `Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bK-dlg-re;rport`, ...dialogHeaders, 'CSeq: 2 INVITE', `Contact: <sip:peer@127.0.0.1:${peer.port}>`, 'Content-Length: 0', '', ''].join('\r\n'), h.port);
  const reOk = await peer.waitFor((m) => m.startsWith('SIP/2.0 200') && /^2 INVITE/.test(line(m, 'CSeq')));
  t.regex(line(reOk, 'Contact'), /sip:127\.0\.0\.1/);
  // A lower CSeq in the dialog is refused 500 (§12.2.2).
  peer.send([`INFO sip:127.0.0.1:${h.port} SIP/2.0`, `Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bK-dlg-old;rport`, ...dialogHeaders, 'CSeq: 1 INFO', 'Content-Length: 0', '', ''].join('\r\n'), h.port);
  await peer.waitFor((m) => m.startsWith('SIP/2.0 500') && /^1 INFO/.test(line(m, 'CSeq')));
  peer.send([`ACK sip:127.0.0.1:${h.port} SIP/2.0`, `Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bK-dlg-reack;rport`, ...dialogHeaders, 'CSeq: 2 ACK', 'Content-Length: 0', '', ''].join('\r\n'), h.port);
  await new Promise((r) => setTimeout(r, 300));
  t.is((await h.gw.request({ type: 'stats' })).acks, 2);
  // The gateway hangs up: BYE to the peer's Contact, within the dialog.
  const bye = h.gw.request({ type: 'bye', dialog: s.openDialogs[0]! }, { timeoutMs: 10_000 });
  const got = await peer.waitFor((m) => m.startsWith('BYE '));
  t.is(line(got, 'Call-ID'), callId);
  t.regex(line(got, 'From'), new RegExp(`tag=${toTag}`));
  t.regex(line(got, 'To'), /tag=peer1/);
  t.regex(got, new RegExp(`^BYE sip:peer@127\\.0\\.0\\.1:${peer.port} SIP/2\\.0`));
  const reply = got.replace(/^BYE .*\r\n/, 'SIP/2.0 200 OK\r\n').replace(/^(Contact|Max-Forwards): .*\r\n/gm, '');
  peer.send(reply, h.port);
  t.deepEqual(await bye, { status: 200 });
  const end = await h.gw.request({ type: 'stats' });
  t.deepEqual(end.ended, { bye: 1 });
  t.is((await h.server.request({ type: 'info' })).dialogs, 0);
});

test('an INVITE the gateway never answers gets 408 after SIPSERVER_INVITE_ANSWER_MS, and the gateway is told', async (t) => {
  const h = await startSip(t, { inviteAnswerMs: 1000 });
  const peer = await Peer.open(t);
  const invite = [
    `INVITE sip:silent@127.0.0.1:${h.port} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bK-silent-1;rport`,
    'From: <sip:peer@127.0.0.1>;tag=peer2',
    `To: <sip:silent@127.0.0.1:${h.port}>`,
    `Call-ID: silent-${Date.now()}@test`,
    'CSeq: 1 INVITE',
    'Max-Forwards: 70',
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
  const sent = Date.now();
  peer.send(invite, h.port);
  const timeout = await peer.waitFor((m) => m.startsWith('SIP/2.0 408'), 8000);
  t.true(Date.now() - sent >= 900, 'not before the deadline');
  t.regex(timeout, /^SIP\/2\.0 408 No Answer From Application/);
  const s = await h.gw.request({ type: 'stats' });
  t.is(s.cancelled, 1);
  t.is((await h.server.request({ type: 'info' })).dialogs, 0);
});
