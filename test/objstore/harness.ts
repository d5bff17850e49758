/** An object store on real loop devices, in-process, on an ephemeral port. */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Scope } from '../helpers/scope.js';
import { ActorSystem } from '../../runtime/system.js';
import type { ObjstoreProtocol } from '../../actors/objstore/messages.js';
import { objstoreArgs, objstoreSupervisor, schedulerArgs, type ObjstoreValues } from '../../actors/objstore/service.js';
import type { SchedulerArgs } from '../../actors/scheduler/messages.js';
import { withLoopDevices } from '../helpers/loop.js';
import { pidAlive } from '../../runtime/pid.js';

export { FileScope } from '../helpers/scope.js';

/** Unmount whatever is mounted under `dir` (deepest first), then remove it. */
export async function cleanStateDir(dir: string): Promise<void> {
  const { execFileSync } = await import('node:child_process');
  const under = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((mp): mp is string => !!mp && mp.startsWith(dir + '/'))
    .reverse();
  for (const mp of under) {
    try {
      execFileSync('umount', [mp]);
    } catch {
      try {
        execFileSync('umount', ['-l', mp]);
      } catch {
        /* gone already */
      }
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

/**
 * A state directory that outlives one store (restart tests start several over it), cleaned up
 * (unmounted, removed) by the teardown of `t`.
 */
export function keptStateDir(t: Scope, prefix = 'hostd-objstore-kept-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => cleanStateDir(dir));
  return dir;
}

export interface Store {
  system: ActorSystem;
  url: string;
  stateDir: string;
  devices: string[];
  provision(device: string): Promise<Response>;
}

export interface StoreOptions {
  volumes?: number;
  sizeMiB?: number;
  provision?: boolean;
  stateDir?: string;
  devices?: string[];
  /**
   * scheduler settings: the tests shorten the grace period, turn the scheduled scrub off, and
   * run repair only where a test asks for it (repairIntervalMs: 500, say)
   */
  scheduler?: Partial<SchedulerArgs>;
  healthFaultThreshold?: number;
  /** store settings over the tests' own (the front's timeouts, say) */
  values?: Partial<ObjstoreValues>;
}

/** The store's supervision tree as the tests run it: short timeouts, ephemeral port, loopback. */
export function testSupervisor(stateDir: string, opts: Pick<StoreOptions, 'scheduler' | 'healthFaultThreshold' | 'values'> = {}) {
  // The kernel-log watcher and hotplug are off unless a test turns them on: a test's failing disk
  // would arm verify runs the test does not expect, and a rescan looking for a missing disk mounts
  // every objstore-labelled disk briefly, racing other test processes' stores as they provision.
  const values = { ioTimeoutMs: 3000, bodyIdleTimeoutMs: 1500, maxObjectBytes: 1024 ** 4, healthFaultThreshold: opts.healthFaultThreshold, allowedOrigins: ['https://app.example'], syslogWatchIntervalMs: 0, disableUdev: true, deviceScanIntervalMs: 3_600_000, snapshotIntervalMinutes: 0, ...opts.values };
  return objstoreSupervisor(objstoreArgs(stateDir, values, 0, '127.0.0.1'), schedulerArgs(stateDir, values, { moveGraceMs: 300, repairIntervalMs: 3_600_000, scrubIntervalDays: 0, ...opts.scheduler }));
}

export async function startStore(t: Scope, opts: StoreOptions = {}): Promise<Store> {
  const stateDir = opts.stateDir ?? mkdtempSync(join(tmpdir(), 'hostd-objstore-'));
  const devices = opts.devices ?? (await withLoopDevices(t, opts.volumes ?? 6, opts.sizeMiB ?? 512));
  const system = await ActorSystem.start({ stateDir, logLevel: process.env.TEST_LOG_LEVEL ?? 'silent', groupThreads: 1, poolThreads: 2, requestTimeoutMs: 30_000 });
  t.teardown(async () => {
    await system.shutdown();
    if (!opts.stateDir) await cleanStateDir(stateDir);
  });
  // A store's boot probes every block device of the machine (mounting each briefly to read its
  // identity), which would race another test file's store provisioning its fresh loop devices:
  // stores start, and provision, one at a time across the test processes.
  const release = await startLock();
  let url: string;
  try {
    await system.start(testSupervisor(stateDir, opts));
    const info = await system.ref<ObjstoreProtocol>('objstore').request({ type: 'info' });
    url = `http://127.0.0.1:${info.port}`;
    if (opts.provision !== false) {
      for (const d of devices) {
        const res = await fetch(`${url}/$/volumes`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ blockPath: d, wipe: Date.now() }) });
        if (res.status !== 201) throw new Error(`provisioning ${d}: ${res.status} ${await res.text()}`);
      }
    }
  } finally {
    release();
  }
  const store: Store = {
    system,
    url,
    stateDir,
    devices,
    // Under the start lock too: another test file's store booting meanwhile mounts every block
    // device briefly to read its identity, and a device mounted so is refused as IN_USE.
    provision: async (device) => {
      const release = await startLock();
      try {
        return await fetch(`${url}/$/volumes`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ blockPath: device, wipe: Date.now() }) });
      } finally {
        release();
      }
    },
  };
  return store;
}

const LOCK = join(tmpdir(), 'hostd-test-store-start.lock');

/** A lock across test processes (mkdir is atomic); a lock left by a dead process is taken over. */
export async function startLock(): Promise<() => void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch {
      let owner = 0;
      try {
        owner = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
      } catch {
        /* being created or removed */
      }
      if (owner > 0 && owner !== process.pid && !pidAlive(owner)) rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`could not take ${LOCK} within 120 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
