/**
 * A real Docker swarm for the deployer's tests: dockerd (Debian's docker.io) started if it does not
 * answer, `docker swarm init --advertise-addr 127.0.0.1` if it is not a swarm, and test images made
 * by `docker import` of a tiny root file system (Debian's busybox-static), since no registry is
 * reachable. All of it idempotent: tests running at once share the daemon and the images.
 *
 * Images (repository hostd-test/app):
 *   v1, v2  run `sleep` (and leave at once on SIGTERM, so a stop-first update does not wait 10 s)
 *   crash   exits 1 at once
 *   slow    becomes healthy (so its task "running") only after SLOW_SECS (or $READY_AFTER seconds)
 * Services are made per test under a fresh stack namespace; `swarmNamespace(t)` removes every
 * service of it at teardown, even when the test failed.
 */
import type { ExecutionContext } from 'ava';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';

const run = promisify(execFile);

export const SOCKET = '/var/run/docker.sock';
export const ENDPOINT = `unix://${SOCKET}`;
export const IMAGE = 'hostd-test/app';
/** How long the slow image takes to become running (healthy). */
export const SLOW_SECS = 6;

const GOOD_CMD = 'CMD ["/bin/sh","-c","trap \\"exit 0\\" TERM; sleep 3600 & wait"]';
const IMAGES: Record<string, string[]> = {
  v1: [GOOD_CMD, 'ENV APP_VERSION=1'],
  v2: [GOOD_CMD, 'ENV APP_VERSION=2'],
  crash: ['CMD ["/bin/sh","-c","exit 1"]'],
  slow: [
    `CMD ["/bin/sh","-c","trap \\"exit 0\\" TERM; sleep \${READY_AFTER:-${SLOW_SECS}}; touch /tmp/ready; sleep 3600 & wait"]`,
    'HEALTHCHECK --interval=500ms --timeout=1s --start-period=60s --retries=3 CMD ["/bin/test","-f","/tmp/ready"]',
  ],
};

export const docker = new Docker({ socketPath: SOCKET });

const pinged = () => docker.ping().then(() => true, () => false);

let ready: Promise<void> | null = null;

/** dockerd running, a swarm, and the test images: once per process. */
export function ensureSwarm(): Promise<void> {
  ready ??= (async () => {
    if (!(await pinged())) {
      // like a service manager would: dockerd outlives the test process
      spawn('dockerd', [], { detached: true, stdio: 'ignore' }).unref();
      for (let i = 0; i < 200 && !(await pinged()); i++) await new Promise((r) => setTimeout(r, 100));
      if (!(await pinged())) throw new Error('dockerd did not start (is docker.io installed? see runtime/setup/debian-packages.txt)');
    }
    const info = (await docker.info()) as { Swarm?: { LocalNodeState?: string } };
    if (info.Swarm?.LocalNodeState !== 'active') {
      await run('docker', ['swarm', 'init', '--advertise-addr', '127.0.0.1']).catch(async (err) => {
        // another test process may have initialised it meanwhile
        const again = (await docker.info()) as { Swarm?: { LocalNodeState?: string } };
        if (again.Swarm?.LocalNodeState !== 'active') throw err;
      });
    }
    await ensureImages();
  })();
  return ready;
}

async function ensureImages(): Promise<void> {
  const missing: string[] = [];
  for (const tag of Object.keys(IMAGES)) {
    const there = await docker.getImage(`${IMAGE}:${tag}`).inspect().then(() => true, () => false);
    if (!there) missing.push(tag);
  }
  if (missing.length === 0) return;
  const dir = mkdtempSync(join(tmpdir(), 'hostd-rootfs-'));
  try {
    const root = join(dir, 'rootfs');
    mkdirSync(join(root, 'bin'), { recursive: true });
    mkdirSync(join(root, 'tmp'));
    const busybox = ['/bin/busybox', '/usr/bin/busybox'].find((p) => existsSync(p));
    if (busybox === undefined) throw new Error('busybox-static is not installed (runtime/setup/debian-packages.txt)');
    copyFileSync(busybox, join(root, 'bin', 'busybox'));
    for (const applet of ['sh', 'sleep', 'touch', 'test', 'true', 'false', 'cat', 'echo']) symlinkSync('busybox', join(root, 'bin', applet));
    const tar = join(dir, 'rootfs.tar');
    await run('tar', ['-C', root, '-cf', tar, '.']);
    for (const tag of missing) {
      await run('docker', ['import', ...(IMAGES[tag] as string[]).flatMap((c) => ['--change', c]), tar, `${IMAGE}:${tag}`]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A fresh stack namespace for one test; its services are removed at teardown. */
export function swarmNamespace(t: ExecutionContext): string {
  const ns = `t${randomBytes(4).toString('hex')}`;
  t.teardown(() => removeStack(ns));
  return ns;
}

export async function removeStack(ns: string): Promise<void> {
  const services = await docker.listServices({ filters: { label: [`com.docker.stack.namespace=${ns}`] } } as Docker.ServiceListOptions).catch(() => []);
  for (const s of services) await docker.getService(s.ID as string).remove().catch(() => undefined);
}

/** The service `<ns>_<name>` as dockerd shows it (null when absent). */
export async function inspectService(name: string): Promise<any | null> {
  const list = (await docker.listServices({ status: true, filters: { name: [name] } } as Docker.ServiceListOptions)) as any[];
  return list.find((s) => s.Spec.Name === name) ?? null;
}
