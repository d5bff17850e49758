/**
 * Recovery from the disks, the reading: every slice file of one mounted volume, with its header
 * and its record sidecar (actors/volume/slice-record.ts), as FoundSlice values for assemble.ts.
 * Plain reads through the page cache (the daemon is stopped; nothing else writes the disks).
 *
 * A slice counts as readable when its header decodes (magic, version, CRC) and the file is exactly
 * as long as the header says (a torn or truncated file does not count). Chunks are not read: their
 * checksums are the scrub's work once the daemon runs again (documented; docs/object-store.md).
 * Temp files (`.tmp`, PUTs that never committed) are not slices and are skipped.
 */
import { open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chunkCount, decodeSliceHeader, SLICE_HEADER_BYTES, trailerBytes, type SliceHeader } from '../../../protocols/objstore/slice-format.js';
import { decodeSliceRecord, type RecordKeyLookup, type SliceRecord } from '../../../protocols/objstore/slice-record.js';
import { SlicePaths, TMP_SUFFIX } from '../../volume/slice-paths.js';
import { RecordPaths } from '../../volume/slice-record.js';
import type { FoundSlice } from './assemble.js';

const NAME_RE = /^([0-9a-f]{24})\.(\d{1,3})$/;
const errnoOf = (err: unknown) => (err as NodeJS.ErrnoException | null)?.code;

export interface ScanCounts {
  files: number;
  tempFiles: number;
  /** names under slices/ that are not slice files at all */
  strays: string[];
}

/**
 * Scan the volume `volumeId` mounted at `mountPoint`. `key`: the volume's keys for sealed
 * sidecars (null on a plain volume). `tick` is called after each slice (progress).
 */
export async function scanVolume(volumeId: number, mountPoint: string, key: RecordKeyLookup | null, tick: () => void): Promise<{ slices: FoundSlice[]; counts: ScanCounts }> {
  const slicePaths = new SlicePaths(mountPoint);
  const recordPaths = new RecordPaths(mountPoint);
  const slices: FoundSlice[] = [];
  const counts: ScanCounts = { files: 0, tempFiles: 0, strays: [] };
  const dirs = (await readdir(slicePaths.root).catch((err: unknown) => (errnoOf(err) === 'ENOENT' ? [] : Promise.reject(err)))).sort();
  for (const sub of dirs) {
    if (!/^[0-9a-f]{2}$/.test(sub)) {
      counts.strays.push(join(slicePaths.root, sub));
      continue;
    }
    for (const name of (await readdir(join(slicePaths.root, sub))).sort()) {
      if (name.endsWith(TMP_SUFFIX)) {
        counts.tempFiles++;
        continue;
      }
      const m = NAME_RE.exec(name);
      if (!m || Number(m[2]) > 255) {
        counts.strays.push(join(slicePaths.root, sub, name));
        continue;
      }
      counts.files++;
      const objectId = `$${m[1]}`;
      const index = Number(m[2]);
      slices.push(await readSlice(volumeId, join(slicePaths.root, sub, name), recordPaths.file(objectId, index), objectId, index, key));
      tick();
    }
  }
  return { slices, counts };
}

async function readSlice(volumeId: number, file: string, sidecar: string, objectId: string, index: number, key: RecordKeyLookup | null): Promise<FoundSlice> {
  const out: FoundSlice = { volumeId, objectId, index, header: null, readable: false, record: null };
  let header: SliceHeader;
  try {
    const fh = await open(file, 'r');
    try {
      const buf = new Uint8Array(SLICE_HEADER_BYTES);
      const { bytesRead } = await fh.read(buf, 0, SLICE_HEADER_BYTES, 0);
      if (bytesRead < SLICE_HEADER_BYTES) throw new Error(`the file is ${bytesRead} bytes long, shorter than a slice header`);
      header = decodeSliceHeader(buf);
      out.header = header;
      if (header.objectId !== objectId || header.index !== index) throw new Error(`the file of slice ${objectId}.${index} holds slice ${header.objectId}.${header.index}`);
      const want = SLICE_HEADER_BYTES + header.sliceSize + chunkCount(header) * trailerBytes(header);
      const size = (await fh.stat()).size;
      if (size !== want) throw new Error(`the file is ${size} bytes long, its header says ${want} (torn or truncated)`);
      out.readable = true;
    } finally {
      await fh.close();
    }
  } catch (err) {
    out.problem = (err as Error).message;
  }
  if (out.header && !out.header.legacy) {
    try {
      out.record = readRecord(await readFile(sidecar), objectId, index, key);
    } catch (err) {
      out.recordProblem = errnoOf(err) === 'ENOENT' ? `slice ${objectId}.${index} on volume ${volumeId} has no record sidecar` : `the record sidecar of slice ${objectId}.${index} on volume ${volumeId}: ${(err as Error).message}`;
    }
  }
  return out;
}

function readRecord(bytes: Buffer, objectId: string, index: number, key: RecordKeyLookup | null): SliceRecord {
  return decodeSliceRecord(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), { key: key ?? undefined, expect: { objectId, index } });
}
