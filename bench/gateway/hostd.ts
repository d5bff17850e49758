/**
 * hostd's path of the gateway bench: a real `hostd daemon --services gateway` (SIP server and
 * gateway, logs at warn as Kamailio's are off) on free ports, and an application on /control
 * that owns the route and answers every `sip.invite` with an SDP — the full path a call takes:
 * SIP server → route lookup (by message to the local gateway, its default) → gateway → the
 * application's WebSocket and back.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GatewayClient } from '../../actors/gateway/client.js';
import { freeUdpPort } from './ports.js';

const MAIN = fileURLToPath(new URL('../../workers/main.js', import.meta.url));

const ANSWER_SDP = ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 40000 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', ''].join('\r\n');

/**
 * `nodeArgs` go before the daemon's entry, e.g. `--cpu-prof --cpu-prof-dir=DIR` (every thread
 * writes its own .cpuprofile when the daemon exits; bench/gateway/profile-top.ts reads them);
 * `env` is added to this process's environment for the daemon (e.g. GATEWAY_THREAD).
 */
export async function startHostdGateway(user = 'service', nodeArgs: string[] = [], env: Record<string, string> = {}): Promise<{ target: string; pid: number; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-bench-gw-'));
  const [gwPort, sipPort] = [await freeUdpPort(), await freeUdpPort()];
  const child = spawn(process.execPath, [
    ...nodeArgs, MAIN, 'daemon', '--services', 'gateway', '--state-dir', dir, '--metrics-port', '0', '--metrics-host', '127.0.0.1', '--log-level', 'warn',
    '--gateway-port', String(gwPort), '--sipserver-port', String(sipPort),
  ], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  let app: GatewayClient | null = null;
  const stop = async () => {
    await app?.close().catch(() => undefined);
    if (child.exitCode === null && child.signalCode === null) {
      const done = new Promise((r) => child.once('close', r));
      child.kill('SIGTERM');
      // A profiled daemon writes one .cpuprofile per thread on its way out: give it time.
      const t = setTimeout(() => child.kill('SIGKILL'), nodeArgs.length ? 120_000 : 10_000);
      await done;
      clearTimeout(t);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${gwPort}/readyz`).then((r) => r.status === 200, () => false);
      if (ok) break;
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`hostd did not become ready: ${err.trim() || `exit ${child.exitCode}`}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    app = await GatewayClient.connect(`ws://127.0.0.1:${gwPort}/control`);
    app.onRequest('sip.invite', () => ({ action: 'answer', sdp: ANSWER_SDP }));
    await app.call('route.register', { routes: [{ match: 'exact', value: user }] });
  } catch (e) {
    await stop();
    throw e;
  }
  return { target: `127.0.0.1:${sipPort}`, pid: child.pid!, stop };
}
