/**
 * The volume key of an encrypted volume, read when the volume opens: the disk's key-slot file
 * (`objstore/.keyslots`, beside `.identity`) opened with the key file named in the actor's args.
 * A disk without a key-slot file is a plain volume. The key stays in the volume actor's memory; it
 * is never in a message, an argument or a log line (args carry the key file's path only).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeKeyFile, decodeKeySlots, encodeKeySlots, KEYSLOTS_FILE, openWithKeyFile, type KeySlots } from '../../protocols/objstore/crypto-format.js';
import { SERVICE_DIR, type VolumeIdentity } from '../../protocols/objstore/identity.js';
import type { VolumeArgs } from './messages.js';
import { writeFileDurably } from './durable-file.js';

export interface VolumeKey {
  volumeKey: Uint8Array;
  keyGen: number;
}

type Run = <T>(what: string, op: () => Promise<T>) => Promise<T>;

/** Path of the key-slot file on a volume mounted at `mountPoint`. */
export const keySlotsPath = (mountPoint: string) => join(mountPoint, SERVICE_DIR, KEYSLOTS_FILE);

/**
 * The volume key of the disk at args.mountPoint, or null when it is not encrypted. Throws, saying
 * why, when it is encrypted and does not open (no key file, another key file, altered slots): the
 * volume then does not open at all, rather than serve slices it cannot read.
 */
export async function openVolumeKey(args: VolumeArgs, identity: VolumeIdentity, run: Run): Promise<VolumeKey | null> {
  const path = keySlotsPath(args.mountPoint);
  let text: string;
  try {
    text = await run('read', () => readFile(path, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`volume ${args.volumeId}: cannot read its key slots ${path}: ${(err as Error).message}`);
  }
  const slots = decodeKeySlots(text);
  if (slots.volumeId !== identity.volumeId || slots.instanceId !== identity.instanceId.toLowerCase()) {
    throw new Error(`volume ${args.volumeId}: its key slots are for volume ${slots.volumeId} of installation ${slots.instanceId}, not this disk's`);
  }
  if (!args.keyFile) throw new Error(`volume ${args.volumeId} is encrypted and no key file was given to open it`);
  let kek: Uint8Array;
  try {
    kek = decodeKeyFile(await run('read', () => readFile(args.keyFile!)));
  } catch (err) {
    throw new Error(`volume ${args.volumeId} is encrypted and the key file ${args.keyFile} does not open it: ${(err as Error).message}`);
  }
  return { volumeKey: openWithKeyFile(slots, kek), keyGen: slots.keyGen };
}

/**
 * Write (or replace) the key slots of the volume mounted at `mountPoint`, durably: a temp file,
 * fsync, rename over, fsync the directory. A crash leaves the old slots or the new ones, never half.
 */
export async function writeKeySlots(mountPoint: string, slots: KeySlots): Promise<void> {
  await writeFileDurably(keySlotsPath(mountPoint), encodeKeySlots(slots));
}

/** The key slots of the volume mounted at `mountPoint`; null when it is not encrypted. */
export async function readKeySlots(mountPoint: string): Promise<KeySlots | null> {
  try {
    return decodeKeySlots(await readFile(keySlotsPath(mountPoint), 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
