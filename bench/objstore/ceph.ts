/** The Ceph radosgw peer: brought up and down with shared/peers/ceph-rgw.sh. */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Cleanup } from './cleanup.js';
import { run } from './proc.js';

export const CEPH = { accessKey: 'PEERTESTAK', secretKey: 'PEERTESTSECRET', region: 'us-east-1' } as const;

/** The peer script: --ceph-script, $CEPH_RGW_SCRIPT, shared/ beside the repository, or /work/shared. */
export function findCephScript(given?: string): string {
  const repo = resolve(fileURLToPath(new URL('../../..', import.meta.url))); // dist/bench/objstore -> repo
  const candidates = [given, process.env.CEPH_RGW_SCRIPT, join(repo, '..', 'shared', 'peers', 'ceph-rgw.sh'), '/work/shared/peers/ceph-rgw.sh'];
  for (const c of candidates) if (c && existsSync(c)) return c;
  throw new Error(`ceph-rgw.sh not found (tried ${candidates.filter(Boolean).join(', ')}); pass --ceph-script PATH or --no-ceph`);
}

export class CephPeer {
  private constructor(readonly script: string, readonly dir: string, readonly endpoint: URL, readonly upSeconds: number) {}

  /**
   * `ceph-rgw.sh up DIR` in a fresh directory under `parent` (on disk: BlueStore uses O_DIRECT).
   * Registers `down` and the removal of DIR with the clean-up before starting anything.
   */
  static async up(script: string, parent: string, cleanup: Cleanup): Promise<CephPeer> {
    const dir = mkdtempSync(join(parent, 'objbench-ceph-'));
    cleanup.add(`remove ${dir}`, () => rmSync(dir, { recursive: true, force: true }));
    cleanup.add(`ceph-rgw.sh down ${dir}`, async () => {
      process.stderr.write('  bringing Ceph down\n');
      await run('bash', [script, 'down', dir], { echo: true, allowFail: true, timeoutMs: 120_000 });
    });
    const t0 = performance.now();
    const out = await run('bash', [script, 'up', dir], { echo: true, timeoutMs: 600_000 });
    const upSeconds = (performance.now() - t0) / 1000;
    const m = /endpoint:\s+(\S+)/.exec(out.stdout);
    if (!m) throw new Error(`ceph-rgw.sh up printed no endpoint:\n${out.stdout}`);
    return new CephPeer(script, dir, new URL(m[1]!), upSeconds);
  }

  /** PIDs of the cluster's daemons (mon, mgr, OSDs, radosgw), from DIR/pids. */
  pids(): number[] {
    try {
      return readFileSync(join(this.dir, 'pids'), 'utf8')
        .split('\n')
        .map((l) => Number(l.trim().split(/\s+/)[1]))
        .filter((p) => Number.isInteger(p) && p > 0);
    } catch {
      return [];
    }
  }
}
