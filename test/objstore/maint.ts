/**
 * Helpers for the maintenance tests: objects of known bytes, byte-exact read-back, the slice
 * files really on the disks counted against the records, and polling the management API.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { chunkCrc, chunkLength, chunkOffset, decodeSliceHeader } from '../../protocols/objstore/slice-format.js';

export const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

export interface ObjectRecordView {
  id: string;
  path: string;
  size: number;
  k: number;
  m: number;
  dataVolumes: number[];
  parityVolumes: number[];
}

export async function api<T = Record<string, unknown>>(url: string, method = 'GET', body?: unknown): Promise<{ status: number; body: T }> {
  // The management API takes bodies as application/json only (issue 21 item 11).
  const res = await fetch(url, { method, ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) }) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed as T };
}

/** PUT objects of the given sizes under /<bucket>/o<n>; returns path → bytes. */
export async function putObjects(base: string, bucket: string, sizes: number[]): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  let n = 0;
  for (const size of sizes) {
    const body = randomBytes(size);
    const path = `/${bucket}/o${n++}`;
    const res = await fetch(`${base}${path}`, { method: 'PUT', body });
    if (res.status !== 201) throw new Error(`PUT ${path}: ${res.status} ${await res.text()}`);
    out.set(path, body);
  }
  return out;
}

/** Every object reads back byte-exact (asserted). */
export async function assertAllExact(t: ExecutionContext, base: string, bodies: Map<string, Buffer>): Promise<void> {
  for (const [path, body] of bodies) {
    const res = await fetch(`${base}${path}`);
    t.is(res.status, 200, `GET ${path}`);
    const got = new Uint8Array(await res.arrayBuffer());
    t.is(got.byteLength, body.byteLength, `${path} length`);
    t.is(md5(got), md5(body), `${path} bytes`);
  }
}

export async function records(base: string, paths: Iterable<string>): Promise<ObjectRecordView[]> {
  const out: ObjectRecordView[] = [];
  for (const p of paths) {
    const r = await api<{ object: ObjectRecordView }>(`${base}/$/fileinfo${p}`);
    if (r.status !== 200) throw new Error(`fileinfo ${p}: ${r.status} ${JSON.stringify(r.body)}`);
    out.push(r.body.object);
  }
  return out;
}

/** Slice files (committed, and temp) on each mounted volume of the store's state directory. */
export function sliceFilesOnDisk(stateDir: string): { byMount: Map<string, string[]>; temps: number } {
  const byMount = new Map<string, string[]>();
  let temps = 0;
  const mnt = join(stateDir, 'mnt');
  for (const m of readdirSync(mnt)) {
    const root = join(mnt, m, 'objstore', 'slices');
    const files: string[] = [];
    let dirs: string[] = [];
    try {
      dirs = readdirSync(root);
    } catch {
      continue;
    }
    for (const d of dirs) {
      for (const f of readdirSync(join(root, d))) {
        if (f.endsWith('.tmp')) temps++;
        else files.push(f);
      }
    }
    byMount.set(m, files);
  }
  return { byMount, temps };
}

/** Slices the records name, as 'hex.index' per volume id. */
export function slicesInRecords(recs: ObjectRecordView[]): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const r of recs) {
    [...r.dataVolumes, ...r.parityVolumes].forEach((v, i) => {
      const list = out.get(v) ?? [];
      list.push(`${r.id.slice(1).toLowerCase()}.${i}`);
      out.set(v, list);
    });
  }
  return out;
}

/** Mount directory name of each volume id (from GET /$/volumes). */
export async function mountsByVolume(base: string): Promise<Map<number, string>> {
  const r = await api<{ volumes: Array<{ id: number; mountPoint: string | null }> }>(`${base}/$/volumes`);
  const out = new Map<number, string>();
  for (const v of r.body.volumes) if (v.mountPoint) out.set(v.id, v.mountPoint.split('/').pop()!);
  return out;
}

/**
 * Nothing lost, nothing duplicated: the slice files on every present volume are exactly the
 * slices the records place there (asserted), and no temp file is left.
 */
export async function assertDisksMatchRecords(t: ExecutionContext, base: string, stateDir: string, paths: Iterable<string>): Promise<void> {
  const recs = await records(base, paths);
  const want = slicesInRecords(recs);
  const mounts = await mountsByVolume(base);
  const { byMount, temps } = sliceFilesOnDisk(stateDir);
  t.is(temps, 0, 'no temp slice file is left');
  for (const [volumeId, mount] of mounts) {
    const onDisk = (byMount.get(mount) ?? []).sort();
    const expected = (want.get(volumeId) ?? []).sort();
    t.deepEqual(onDisk, expected, `volume ${volumeId}: slice files on disk = slices its records name`);
  }
}

/** Poll `fn` until it returns a truthy value (returned), or fail after `ms`. */
export async function waitFor<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 60_000, every = 200): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/** Wait until no relocation is pending (old slices deleted after their grace period). */
export async function settled(base: string): Promise<void> {
  await waitFor('relocations to settle', async () => {
    const d = await api<{ scheduler: { moves: { copying: number; flipped: number } } }>(`${base}/$/debug`);
    return d.status === 200 && d.body.scheduler.moves.copying === 0 && d.body.scheduler.moves.flipped === 0;
  });
}

/** Write the whole file in place and make it durable (volume reads use O_DIRECT). */
export function rewrite(path: string, bytes: Uint8Array): void {
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.byteLength, 0);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Flip a byte in the middle of chunk 0's payload of a slice file; with `fixCrc` the chunk's
 * CRC32C is rewritten so the chunk still verifies (rot that a checksum cannot see). Returns the
 * original bytes.
 */
export function flipByte(path: string, fixCrc: boolean): Buffer {
  const original = readFileSync(path);
  const h = decodeSliceHeader(original);
  const len = chunkLength(h, 0);
  const at = chunkOffset(h.chunkSize, 0);
  if (original.readUInt32BE(at + len) !== chunkCrc(original.subarray(at, at + len))) throw new Error(`${path}: chunk 0 is not followed by its CRC32C (not the layout of slice-format.ts)`);
  const changed = Buffer.from(original);
  const mid = at + (len >> 1);
  changed[mid] = changed[mid]! ^ 0x5a;
  if (fixCrc) changed.writeUInt32BE(chunkCrc(changed.subarray(at, at + len)), at + len);
  rewrite(path, changed);
  return original;
}
