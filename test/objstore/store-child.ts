/**
 * An object store (with its scheduler) in a process of its own, so that a test can kill -9 it:
 *
 *   node dist/test/objstore/store-child.js '{"stateDir": "...", "scheduler": {...}}'
 *
 * It boots the store over the state directory exactly as the harness's startStore does (same
 * supervision tree, same start lock; the volumes are found again by the identity on the disks,
 * so `devices` is accepted and ignored), prints one JSON line `{"url":"http://127.0.0.1:<port>"}`
 * on stdout and stays up until it is killed. It provisions nothing: the test does, over HTTP.
 * Daemon logs (TEST_LOG_LEVEL, default silent) also go to stdout, one JSON line each.
 */
import '../../workers/threadpool.js';
import '../../workers/heap.js';
import type { ObjstoreProtocol } from '../../actors/objstore/messages.js';
import type { SchedulerArgs } from '../../actors/scheduler/messages.js';
import { ActorSystem } from '../../runtime/system.js';
import { startLock, testSupervisor } from './harness.js';

export interface ChildOptions {
  stateDir: string;
  /** ignored: discovery finds the disks by their identity */
  devices?: string[];
  scheduler?: Partial<SchedulerArgs>;
}

function parseOptions(raw: string | undefined): ChildOptions {
  if (raw === undefined) throw new Error('usage: store-child.js \'{"stateDir": "/path", "scheduler": {...}}\'');
  const o = JSON.parse(raw) as Partial<ChildOptions>;
  if (typeof o.stateDir !== 'string' || !o.stateDir) throw new Error(`stateDir (a directory) is required; got ${JSON.stringify(o.stateDir)}`);
  if (o.scheduler !== undefined && (typeof o.scheduler !== 'object' || o.scheduler === null)) throw new Error('scheduler must be an object of scheduler settings');
  return { stateDir: o.stateDir, devices: o.devices, scheduler: o.scheduler };
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv[2]);
  // Booting probes every block device of the machine: one store starts at a time (harness.ts).
  const release = await startLock();
  let port: number;
  try {
    const system = await ActorSystem.start({ stateDir: opts.stateDir, logLevel: process.env.TEST_LOG_LEVEL ?? 'silent', groupThreads: 1, poolThreads: 2, requestTimeoutMs: 30_000 });
    await system.start(testSupervisor(opts.stateDir, { scheduler: opts.scheduler }));
    port = (await system.ref<ObjstoreProtocol>('objstore').request({ type: 'info' })).port;
  } finally {
    release();
  }
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}` }) + '\n');
  // Stay up until killed (the test sends SIGKILL; a SIGTERM from a clean-up stops it at once).
  setInterval(() => undefined, 1 << 30);
}

main().catch((err: unknown) => {
  process.stderr.write(`store-child: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
