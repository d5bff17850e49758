/**
 * Serve hostd's object store for the benchmark: six fresh loop volumes (sparse files), the real
 * actor system, on an ephemeral port (or --port). Prints `URL <url> PID <pid>` once ready, then
 * serves until SIGTERM/SIGINT, and cleans up (actors, mounts, loop devices, files).
 *
 *   node dist/bench/objstore/serve.js [--port N] [--volume-mib 4096]
 */
// First: the libuv pool is sized before any I/O, as in the daemon (workers/threadpool.ts).
import '../../workers/threadpool.js';
import '../../workers/heap.js';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, openSync, ftruncateSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ActorSystem } from '../../runtime/system.js';
import type { ObjstoreProtocol } from '../../actors/objstore/messages.js';
import { objstoreArgs, objstoreSupervisor, schedulerArgs } from '../../actors/objstore/service.js';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, 'volume-mib': { type: 'string', default: '4096' } } });
const dir = mkdtempSync(join(tmpdir(), 'hostd-bench-store-'));
const devices: string[] = [];
const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8' }).trim();
let system: ActorSystem | null = null;

async function cleanup(): Promise<void> {
  if (system) await system.shutdown().catch(() => undefined);
  try {
    sh('sh', ['-c', `grep ' ${dir}/' /proc/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l`]);
  } catch {
    /* nothing mounted */
  }
  for (const d of devices) {
    try {
      sh('losetup', ['-d', d]);
    } catch {
      /* gone */
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

process.on('SIGTERM', () => void cleanup().then(() => process.exit(0)));
process.on('SIGINT', () => void cleanup().then(() => process.exit(0)));

try {
  for (let i = 0; i < 6; i++) {
    const file = join(dir, `disk${i}.img`);
    const fd = openSync(file, 'w');
    ftruncateSync(fd, Number(values['volume-mib']) * 1024 * 1024);
    closeSync(fd);
    devices.push(sh('losetup', ['-f', '--show', '--direct-io=on', file]));
  }
  system = await ActorSystem.start({ stateDir: join(dir, 'state'), logLevel: 'warn' });
  const settings = { ioTimeoutMs: 10_000, bodyIdleTimeoutMs: 30_000, maxObjectBytes: 1024 ** 4, scrubIntervalDays: 0 };
  // The daemon's supervision tree (stripe coders, store, scheduler), with its default settings.
  await system.start(objstoreSupervisor(objstoreArgs(join(dir, 'state'), settings, Number(values.port), '127.0.0.1'), schedulerArgs(join(dir, 'state'), settings)));
  const { port } = await system.ref<ObjstoreProtocol>('objstore').request({ type: 'info' });
  const url = `http://127.0.0.1:${port}`;
  for (const d of devices) {
    const res = await fetch(`${url}/$/volumes`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ blockPath: d, wipe: Date.now() }) });
    if (res.status !== 201) throw new Error(`provisioning ${d}: ${res.status} ${await res.text()}`);
  }
  console.log(`URL ${url} PID ${process.pid}`);
} catch (err) {
  console.error(err);
  await cleanup();
  process.exit(1);
}
