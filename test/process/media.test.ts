/**
 * The media bridge inside the real daemon: the command channel on its default port 3002, its
 * settings as flags, its metrics at /metrics, and SIGTERM closing sessions cleanly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { MediaBridgeClient, MediaBridgeError } from '../../actors/media-bridge/client.js';
import { runCli, startDaemon } from '../helpers/daemon.js';
import { RtpPeer } from '../helpers/media.js';

function stateDir(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-media-daemon-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test.serial('hostd daemon --services media: sessions on port 3002, metrics, clean SIGTERM', async (t) => {
  const d = startDaemon(t, ['--state-dir', stateDir(t), '--services', 'media', '--metrics-port', '0', '--metrics-host', '127.0.0.1', '--media-rtp-port-min', '41000', '--media-rtp-port-max', '41999']);
  const metrics = await d.waitFor((l) => l.msg === 'metrics endpoint listening');
  await d.waitFor((l) => l.msg === 'daemon ready');
  const c = await MediaBridgeClient.connect('ws://127.0.0.1:3002/');
  t.teardown(() => c.close());
  await c.call('session.create', {});
  const peer = await RtpPeer.open(t);
  const ep = await c.call('endpoint.rtp.create_from_offer', { sdp: peer.sdp() });
  const port = Number(/^m=audio (\d+)/m.exec(ep.sdp_answer)![1]);
  t.true(port >= 41000 && port <= 41999, `RTP port ${port} from the configured range`);
  await c.call('endpoint.create_tone', { tone: 'beep', duration_ms: 200 });
  await c.waitFor('endpoint.tone.finished');
  t.true(peer.received.length >= 8, 'the tone reached the peer');
  const bad = await c.call('endpoint.create_tone', { tone: 'whistle' }).catch((e: MediaBridgeError) => e);
  t.is((bad as MediaBridgeError).code, 'INVALID_PARAMS');
  // Packet counts reach the metrics once a second (the packet path does no metric work).
  let text = '';
  for (let i = 0; i < 30 && !/^mediabridge_packets_sent_total\{kind="tone"\} [1-9]/m.test(text); i++) {
    if (i) await new Promise((r) => setTimeout(r, 100));
    text = await (await fetch(`http://127.0.0.1:${metrics.port as number}/metrics`)).text();
  }
  t.regex(text, /^mediabridge_commands_total\{method="endpoint.create_tone",outcome="ok"\} 1$/m);
  t.regex(text, /^mediabridge_commands_total\{method="invalid",outcome="INVALID_PARAMS"\} 1$/m);
  t.regex(text, /^mediabridge_sessions 1$/m);
  t.regex(text, /^mediabridge_packets_sent_total\{kind="tone"\} [1-9]\d*$/m);
  t.regex(text, /^mediabridge_webrtc_ice_restart_conflicts 0$/m);
  d.proc.kill('SIGTERM');
  t.is((await d.exited).code, 0);
});

test.serial('bad media settings stop start-up with a message naming them', (t) => {
  const dir = stateDir(t);
  const cases: Array<[string[], RegExp]> = [
    [['--media-host', '0.0.0.0'], /MEDIA_HOST 0\.0\.0\.0 is not a loopback address: set MEDIA_TOKEN/],
    [['--media-advertised-address', 'example'], /--media-advertised-address/],
    [['--media-peer-policy', 'trusting'], /--media-peer-policy/],
    [['--media-rtp-port-min', '80'], /--media-rtp-port-min/],
  ];
  for (const [args, re] of cases) {
    const r = runCli(['daemon', '--state-dir', dir, '--services', 'media', '--metrics-port', '0', ...args]);
    t.not(r.status, 0, args.join(' '));
    t.regex(r.stderr, re);
  }
  const help = runCli(['daemon', '--help']);
  t.regex(help.stdout, /--media-port/);
  t.regex(help.stdout, /MEDIA_ORPHAN_TIMEOUT_MS/);
});

test.serial('SIGTERM at any moment of start-up ends the daemon cleanly, never with an abort', async (t) => {
  const dir = stateDir(t);
  for (const delayMs of [50, 150, 300, 450, 600, 900]) {
    const d = startDaemon(t, ['--state-dir', dir, '--services', 'media', '--metrics-port', '0', '--media-port', '0']);
    await new Promise((r) => setTimeout(r, delayMs));
    d.proc.kill('SIGTERM');
    const exit = await d.exited;
    // Before Node has installed the daemon's handler the signal's default action ends it (signal
    // SIGTERM); after, the daemon stops in order (exit code). Never an abort (SIGABRT).
    const clean = exit.signal === 'SIGTERM' || (exit.signal === null && (exit.code === 0 || exit.code === 1));
    t.true(clean, `SIGTERM after ${delayMs} ms: ${JSON.stringify(exit)} ${d.stderr().slice(-800)}`);
    t.notRegex(d.stderr(), /FATAL ERROR|Abort/);
  }
});
