/**
 * A volume closed while its files are being opened (its actor stops: the disk went missing, the
 * daemon shuts down), on a real loop device: a slice create or a read whose open ends after the
 * close is refused CLOSED, and the file it opened is closed at once — not left open until garbage
 * collection (node's DEP0137 warning, seen in put-failover before) — and no temp file stays.
 */
import test, { type ExecutionContext } from 'ava';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readlinkSync } from 'node:fs';
import { pino } from 'pino';
import { provisionDisk } from '../../actors/volume/disks.js';
import { Volume } from '../../actors/volume/volume.js';
import type { VolumeArgs } from '../../actors/volume/messages.js';
import type { SliceHeader } from '../../protocols/objstore/slice-format.js';
import { mountRoot, withLoopDevices } from '../helpers/loop.js';
import { waitFor } from '../helpers/util.js';

const CHUNK = 64 * 1024;

async function openVolume(t: ExecutionContext): Promise<Volume> {
  const [dev] = await withLoopDevices(t, 1, 320);
  const { mountPoint, device } = await provisionDisk({ blockPath: dev!, volumeId: 1, instanceId: randomUUID(), mountRoot: mountRoot(t), createdAt: Date.now() });
  const args: VolumeArgs = { volumeId: 1, mountPoint, device, readOnly: false, ioTimeoutMs: 5000, maxInflight: 4 };
  const v = await Volume.open(args, pino({ level: 'silent' }));
  t.teardown(() => v.close());
  return v;
}

/** The files this process holds open under `dir`. */
function openUnder(dir: string): string[] {
  const held: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir + '/')) held.push(target);
    } catch {
      /* closed meanwhile */
    }
  }
  return held;
}

/** Every file under `dir`, recursively (relative names). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => `${e.parentPath ?? e.path}/${e.name}`.slice(dir.length + 1));
}

const header = (objectId: string, sliceSize: number): SliceHeader => ({ objectId, index: 0, k: 4, m: 2, chunkSize: CHUNK, objectSize: sliceSize * 4, sliceSize });

test('a slice create whose open ends after the close: CLOSED, its file closed at once, no temp file left', async (t) => {
  const v = await openVolume(t);
  const root = v.args.mountPoint;
  const before = filesUnder(root);
  // close() runs to its first await at once: the create's open is still ahead of it
  const [created, closed] = await Promise.allSettled([v.create({ objectId: '$0000000000000000000000a1', index: 0 }, header('$0000000000000000000000a1', CHUNK)), v.close()]);
  t.is(closed.status, 'fulfilled');
  t.is(created.status, 'rejected');
  const err = (created as PromiseRejectedResult).reason as { code: string; message: string };
  t.is(err.code, 'CLOSED');
  t.regex(err.message, /volume 1 closed/);
  await waitFor('no file of the volume open', () => openUnder(root).length === 0, 5000).catch(() => t.fail(`files still open: ${openUnder(root).join(', ')}`));
  await waitFor('no temp file left', () => filesUnder(root).join() === before.join(), 5000).catch(() => t.fail(`files left: ${filesUnder(root).join(', ')}`));
});

test('a read whose open ends after the close: CLOSED and its file closed at once; a slice committed before stays', async (t) => {
  const v = await openVolume(t);
  const root = v.args.mountPoint;
  const ref = { objectId: '$0000000000000000000000b2', index: 0 };
  const data = randomBytes(CHUNK);
  await v.create(ref, header(ref.objectId, CHUNK));
  await v.append(ref, 0, new Uint8Array(data), true);
  t.deepEqual(Buffer.from((await v.read(ref, 0, 1)).data), data, 'read back before the close');
  const [read] = await Promise.allSettled([v.read(ref, 0, 1), v.close()]);
  t.is(read.status, 'rejected');
  t.like((read as PromiseRejectedResult).reason, { code: 'CLOSED' });
  await waitFor('no file of the volume open', () => openUnder(root).length === 0, 5000).catch(() => t.fail(`files still open: ${openUnder(root).join(', ')}`));
  t.true(filesUnder(root).some((f) => f.endsWith('0000000000000000000000b2.0')), `the committed slice file is there: ${filesUnder(root).join(', ')}`);
});
