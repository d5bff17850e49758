/**
 * Serve hostd's media bridge for the benchmark in a process of its own (so its CPU is read from
 * /proc like rtpengine's): the real ActorSystem with the media service's supervision tree,
 * silent logs, on 127.0.0.1. Prints `URL ws://127.0.0.1:<port>/ PID <pid>` once ready, then
 * serves until SIGTERM/SIGINT and cleans up.
 *
 *   node dist/bench/media/serve.js [--port 0] [--group-threads 2] [--rtp-port-min 61000] [--rtp-port-max 64999]
 *
 * The RTP range sits above Linux's ephemeral range (32768-60999), where the generator's sockets
 * live: the bridge's RTCP reports to a leg's port+1 cannot then land on another bridge endpoint
 * (with rtcp-mux off they would be counted there as RTP packets in). Room for 1000 calls.
 * Settings beyond the defaults: a long media timeout (no endpoint goes quiet during a run) and
 * a 1 s orphan timeout (sessions left behind by a dropped connection go quickly).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ActorSystem } from '../../runtime/system.js';
import { BRIDGE_ID, type BridgeProtocol } from '../../actors/media-bridge/messages.js';
import { BRIDGE_MODULE, bridgeArgs, mediaSettings } from '../../actors/media/service.js';
import { resolve } from '../../runtime/config/settings.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'group-threads': { type: 'string', default: '2' },
    'rtp-port-min': { type: 'string', default: '61000' },
    'rtp-port-max': { type: 'string', default: '64999' },
    /** Address the RTP sockets bind (default: every address, as the daemon's default). */
    'rtp-bind': { type: 'string', default: '' },
  },
});
const stateDir = mkdtempSync(join(tmpdir(), 'hostd-bench-media-'));
let system: ActorSystem | null = null;

async function cleanup(): Promise<void> {
  if (system) await system.shutdown().catch(() => undefined);
  rmSync(stateDir, { recursive: true, force: true });
}
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void cleanup().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

try {
  system = await ActorSystem.start({ stateDir, logLevel: 'silent', groupThreads: Number(values['group-threads']), poolThreads: 1 });
  const args = bridgeArgs({
    ...resolve(mediaSettings, {}, {}),
    port: Number(values.port),
    rtpPortMin: Number(values['rtp-port-min']),
    rtpPortMax: Number(values['rtp-port-max']),
    rtpBindAddress: values['rtp-bind'],
    mediaTimeoutMs: 600_000,
    orphanTimeoutMs: 1000,
    maxSessions: 100_000,
    maxSessionsPerConnection: 100_000,
  });
  await system.start({ id: 'media.supervisor', children: [{ id: BRIDGE_ID, module: BRIDGE_MODULE, args }] });
  const info = await system.ref<BridgeProtocol>(BRIDGE_ID).request({ type: 'info' });
  console.log(`URL ws://127.0.0.1:${info.port}/ PID ${process.pid}`);
} catch (err) {
  console.error(err);
  await cleanup();
  process.exit(1);
}
