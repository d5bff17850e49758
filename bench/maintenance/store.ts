/**
 * The object store of the maintenance benchmark: in this process, on real loop devices, started
 * the way test/objstore/harness.ts startStore starts it (ActorSystem.start, then testSupervisor:
 * the object store and its maintenance scheduler, 300 ms move grace, scheduled scrub and repair
 * off) but without ava. It has its own state directory and loop devices (sparse files attached
 * with losetup --direct-io=on, so the volumes' reads reach the disk and not the host's page
 * cache); everything is removed at the end, also on an error or on SIGINT/SIGTERM (the Cleanup of
 * bench/objstore/cleanup.ts). The directories carry the test helpers' names
 * (hostd-loop-<pid>-*, hostd-mnt-<pid>-*), so what a killed run leaves is swept by the next run
 * or test process that asks for loop devices. Every start and every provisioning holds the
 * harness's cross-process startLock(): a store's boot probes every block device of the machine.
 */
import { join } from 'node:path';
import { ActorSystem } from '../../runtime/system.js';
import type { ObjstoreProtocol } from '../../actors/objstore/messages.js';
import type { SchedulerArgs } from '../../actors/scheduler/messages.js';
import { attachLoop, createSparseFile, detachLoop, loopDir, mountRoot, sweepStale } from '../../test/helpers/loop.js';
import { FileScope, startLock, testSupervisor } from '../../test/objstore/harness.js';
import { api } from '../../test/objstore/maint.js';
import type { Cleanup } from '../objstore/cleanup.js';

const log = (s: string) => process.stderr.write(`${s}\n`);

export class BenchStore {
  readonly devices: string[] = [];
  /** false when losetup refused --direct-io=on (then the host page cache sits below the volumes) */
  directIo = true;
  url = '';
  private system: ActorSystem | null = null;
  private stopStep: (() => Promise<void>) | null = null;

  private constructor(readonly stateDir: string, private readonly cleanup: Cleanup) {}

  /** `count` loop devices of `sizeMiB` (sparse) and an empty state directory; nothing started. */
  static async create(count: number, sizeMiB: number, cleanup: Cleanup): Promise<BenchStore> {
    await sweepStale();
    // FileScope runs its teardowns last-registered first: unmount and remove the state
    // directory, then detach the loop devices, then remove their backing files.
    const scope = new FileScope();
    cleanup.add('remove the loop devices and the state directory', () => scope.run());
    const files = loopDir(scope.t);
    const devices: string[] = [];
    scope.t.teardown(async () => {
      for (const d of devices.splice(0).reverse()) await detachLoop(d).catch((err: Error) => log(`clean-up: ${d}: ${err.message}`));
    });
    const self = new BenchStore(mountRoot(scope.t), cleanup);
    for (let i = 0; i < count; i++) {
      const file = join(files, `disk${i}.img`);
      await createSparseFile(file, sizeMiB);
      let dev: string;
      try {
        dev = await attachLoop(file, { directIo: self.directIo ? 'on' : 'off' });
      } catch (err) {
        if (!self.directIo) throw err;
        log(`  losetup --direct-io=on refused (${(err as Error).message.split('\n')[0]}): using --direct-io=off`);
        self.directIo = false;
        dev = await attachLoop(file, { directIo: 'off' });
      }
      devices.push(dev);
      self.devices.push(dev);
    }
    return self;
  }

  /**
   * Start the store (over the existing state directory, if any) with these scheduler settings.
   * `groupThreads`: threads per shared group (the volumes' among them); 1 unless asked, the
   * daemon's default is the number of CPUs.
   */
  async start(scheduler: Partial<SchedulerArgs>, groupThreads = 1): Promise<void> {
    if (this.system) throw new Error('the store is running already');
    // The daemon's pino logs go to stdout (fd 1): silent unless asked for (they would mix with the tables).
    const system = await ActorSystem.start({ stateDir: this.stateDir, logLevel: process.env.BENCH_LOG_LEVEL ?? 'silent', groupThreads, poolThreads: 2, requestTimeoutMs: 30_000 });
    this.system = system;
    this.stopStep = this.cleanup.add('stop the object store', () => system.shutdown());
    const release = await startLock();
    try {
      await system.start(testSupervisor(this.stateDir, { scheduler }));
      const info = await system.ref<ObjstoreProtocol>('objstore').request({ type: 'info' });
      this.url = `http://127.0.0.1:${info.port}`;
    } finally {
      release();
    }
  }

  async stop(): Promise<void> {
    const step = this.stopStep;
    this.stopStep = null;
    this.system = null;
    if (step) await step();
  }

  async restart(scheduler: Partial<SchedulerArgs>): Promise<void> {
    await this.stop();
    await this.start(scheduler);
  }

  /** Provision the devices (in order); returns their volume ids. */
  async provision(devices: string[]): Promise<number[]> {
    const ids: number[] = [];
    const release = await startLock();
    try {
      for (const d of devices) {
        const r = await api<{ volume: { id: number } }>(`${this.url}/$/volumes`, 'POST', { blockPath: d, wipe: Date.now() });
        if (r.status !== 201) throw new Error(`provisioning ${d}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
        ids.push(r.body.volume.id);
      }
    } finally {
      release();
    }
    return ids;
  }
}
