/** Real peer: ffmpeg 5.1 writes the SDP of the (S)RTP stream it sends; we answer it. */
import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answerOffer, type LocalMedia } from '../../protocols/media/sdp/index.js';

const LOCAL: LocalMedia = { address: '127.0.0.1', family: 'IP4', port: 41000, rtcpPort: 41001, sessionId: '1', sessionVersion: 1 };

/** Binds a UDP sink on an ephemeral port (absorbs what ffmpeg sends), runs ffmpeg, returns the SDP it wrote. */
async function ffmpegSdp(t: ExecutionContext, encode: string[], url: (port: number) => string): Promise<{ sdp: string; port: number }> {
  const sock = createSocket('udp4');
  t.teardown(() => sock.close());
  await new Promise<void>((res, rej) => { sock.once('error', rej); sock.bind(0, '127.0.0.1', res); });
  sock.on('message', () => {});
  const port = sock.address().port;
  const dir = await mkdtemp(join(tmpdir(), 'sdp-ffmpeg-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const sdpFile = join(dir, 'out.sdp');
  const args = ['-hide_banner', '-loglevel', 'error', '-nostdin', '-re', '-f', 'lavfi', '-i', 'sine=frequency=1000:duration=0.3', ...encode, url(port), '-sdp_file', sdpFile];
  const child = spawn('ffmpeg', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const code = await new Promise<number | null>((res, rej) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); rej(new Error(`ffmpeg timed out: ${stderr}`)); }, 20_000);
    child.once('error', (e) => { clearTimeout(timer); rej(e); });
    child.once('exit', (c) => { clearTimeout(timer); res(c); });
  });
  t.is(code, 0, stderr);
  return { sdp: await readFile(sdpFile, 'utf8'), port };
}

for (const suite of ['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32'] as const) {
  test(`ffmpeg SRTP (${suite}) PCMU offer: codec, remote and the exact key are negotiated`, async (t) => {
    const key = randomBytes(30);
    const ours = Uint8Array.from(randomBytes(30));
    const { sdp, port } = await ffmpegSdp(t,
      ['-ar', '8000', '-ac', '1', '-c:a', 'pcm_mulaw', '-f', 'rtp', '-srtp_out_suite', suite, '-srtp_out_params', key.toString('base64')],
      (p) => `srtp://127.0.0.1:${p}`);
    t.regex(sdp, /^m=audio \d+ RTP\/AVP 0/m, 'ffmpeg 5.1 writes RTP/AVP with a=crypto');
    const r = answerOffer(sdp, { local: LOCAL, direction: 'sendrecv', newKey: () => ours });
    if (!r.ok) return t.fail(r.error);
    const n = r.value.negotiated;
    t.deepEqual(n.sendCodec, { name: 'pcmu', pt: 0, clockRate: 8000, channels: 1 });
    t.like(n, { secure: true, profile: 'RTP/AVP', peerDirection: 'sendrecv' });
    t.like(n.remote, { address: '127.0.0.1', port, rtcpPort: port + 1 });
    t.is(n.recvKey!.suite, suite);
    t.deepEqual(Buffer.from(n.recvKey!.keySalt), key);
    t.regex(r.value.sdp, new RegExp(`^a=crypto:${n.recvKey!.tag} ${suite} inline:${Buffer.from(ours).toString('base64').replace(/[+/]/g, '\\$&')}\\r$`, 'm'));
  });
}

test('ffmpeg plain RTP PCMU offer and Opus offer', async (t) => {
  const plain = await ffmpegSdp(t, ['-ar', '8000', '-ac', '1', '-c:a', 'pcm_mulaw', '-f', 'rtp'], (p) => `rtp://127.0.0.1:${p}`);
  const a = answerOffer(plain.sdp, { local: LOCAL, direction: 'sendrecv', newKey: () => { throw new Error('no key for plain RTP'); } });
  if (!a.ok) return t.fail(a.error);
  t.like(a.value.negotiated, { secure: false, recvKey: null, sendKey: null });
  t.is(a.value.negotiated.sendCodec.name, 'pcmu');
  t.is(a.value.negotiated.remote.port, plain.port);

  const opus = await ffmpegSdp(t, ['-ar', '48000', '-ac', '2', '-c:a', 'libopus', '-f', 'rtp'], (p) => `rtp://127.0.0.1:${p}`);
  const pt = Number(/^a=rtpmap:(\d+) opus\/48000\/2/m.exec(opus.sdp)?.[1]);
  t.true(pt >= 96 && pt <= 127, opus.sdp);
  const b = answerOffer(opus.sdp, { local: LOCAL, direction: 'sendrecv', newKey: () => new Uint8Array(30) });
  if (!b.ok) return t.fail(b.error);
  t.deepEqual(b.value.negotiated.sendCodec, { name: 'opus', pt, clockRate: 48000, channels: 2 });
  const c = answerOffer(opus.sdp, { local: LOCAL, direction: 'sendrecv', newKey: () => new Uint8Array(30), codecs: ['pcmu'] });
  t.false(c.ok, 'PCMU-only bridge has no codec in common with an Opus-only offer');
});
