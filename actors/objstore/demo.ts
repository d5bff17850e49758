/**
 * Demo volumes (`hostd daemon --demo-volumes`, used by `npm start`): six sparse files under the
 * state directory attached as loop devices, so a fresh machine has a working store at once.
 * They are provisioned through POST /$/volumes's own code path. After a reboot the files are
 * re-attached (under whatever loop names are free) before the volumes are looked for.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, ftruncateSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const DEMO_VOLUMES = 6;

export function demoFiles(stateDir: string): string[] {
  return Array.from({ length: DEMO_VOLUMES }, (_, i) => join(stateDir, 'demo', `disk-${i + 1}.img`));
}

/** Attach the demo files that exist and are not attached yet; returns their loop devices. */
export async function attachDemoFiles(stateDir: string): Promise<string[]> {
  const devices: string[] = [];
  for (const file of demoFiles(stateDir)) {
    if (!existsSync(file)) continue;
    const { stdout } = await run('losetup', ['-j', file, '-O', 'NAME', '-n']);
    const attached = stdout.trim().split('\n').filter(Boolean)[0];
    devices.push(attached ?? (await run('losetup', ['-f', '--show', file])).stdout.trim());
  }
  return devices;
}

/** Make the six sparse files and attach them; returns their loop devices. */
export async function createDemoFiles(stateDir: string, sizeMiB: number): Promise<string[]> {
  mkdirSync(join(stateDir, 'demo'), { recursive: true });
  for (const file of demoFiles(stateDir)) {
    if (existsSync(file)) continue;
    const fd = openSync(file, 'w');
    ftruncateSync(fd, sizeMiB * 1024 * 1024);
    closeSync(fd);
  }
  return attachDemoFiles(stateDir);
}
