/**
 * Listing a container (Metadata.children, the mount's readdir) on a real LMDB: the entries
 * directly in it, child containers once each, nothing from deeper down or from a sibling whose
 * name shares the prefix, in key order; the root lists buckets and bucket-level objects.
 */
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEnvironment } from '../../runtime/checkpoint/store.js';
import { Metadata } from '../../actors/objstore/metadata.js';
import type { ObjectRecord } from '../../protocols/objstore/headers.js';

/** Metadata on an LMDB environment of its own, removed after the test. */
function freshMetadata(t: ExecutionContext): Metadata {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-mount-index-'));
  const root = openEnvironment(dir);
  t.teardown(async () => {
    await root.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return new Metadata(root);
}

let n = 0;
function rec(path: string): ObjectRecord {
  const id = `$${(n++).toString(16).padStart(24, '0')}`;
  return { id, path, size: n, mime: 'x/y', md5: '0'.repeat(32), k: 1, m: 1, chunkSize: 1024, dataVolumes: [1], parityVolumes: [2], createdAt: 0 };
}

test('children: direct entries only, containers once, prefix siblings and deeper paths left out', async (t) => {
  const meta = freshMetadata(t);
  const paths = ['/b/a', '/b/a.txt', '/b/a0', '/b/ab/x', '/b/c/d/e', '/b/c/d/f', '/b/c/g', '/b-sibling/z', '/bb/y', '/top', '/b/é', '/b/ z'];
  for (const p of paths) t.is(await meta.commitObject(rec(p)), null, p);
  // Key order is UTF-8 byte order: '-' (0x2d) sorts before '/' (0x2f), so /b-sibling/z before /b/a.
  const show = (c: string) => meta.children(c).map((e) => (e.dir ? `${e.name}/` : e.name));
  t.deepEqual(show('/b'), [' z', 'a', 'a.txt', 'a0', 'ab/', 'c/', 'é']);
  t.deepEqual(show('/b/c'), ['d/', 'g']);
  t.deepEqual(show('/b/c/d'), ['e', 'f']);
  t.deepEqual(show('/'), ['b-sibling/', 'b/', 'bb/', 'top']);
  t.deepEqual(show('/b/a'), [], 'an object is not a container');
  t.deepEqual(show('/nothing'), []);
});

test('children of a container with many objects below a sibling: one seek past them', async (t) => {
  const meta = freshMetadata(t);
  const root = meta.root;
  await root.transaction(() => {
    for (let i = 0; i < 20_000; i++) {
      const r = rec(`/big/many/${i}`);
      meta.objects.putSync(r.id, r);
      meta.paths.putSync(r.path, r.id);
    }
  });
  await meta.commitObject(rec('/big/one'));
  let steps = 0;
  const original = meta.paths.getKeys.bind(meta.paths);
  meta.paths.getKeys = ((opts: Parameters<typeof original>[0]) => {
    const it = original(opts);
    return (function* () {
      for (const e of it) {
        steps++;
        yield e;
      }
    })();
  }) as unknown as typeof meta.paths.getKeys;
  t.deepEqual(meta.children('/big').map((e) => e.name), ['many', 'one']);
  t.true(steps <= 3, `${steps} keys read to list 2 entries over 20 000 below`);
  steps = 0;
  t.is(meta.children('/big/many').length, 20_000);
  t.is(steps, 20_000);
});
