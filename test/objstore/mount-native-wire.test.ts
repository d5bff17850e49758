/**
 * The frames between the mount's FUSE process and native/objstore-fuse (native-wire.ts), as the C
 * program writes them: split anywhere across chunks, several in one chunk; a bad length or an
 * unknown op is an error naming it (the FUSE process stops the program on it), never a guess.
 */
import test from 'ava';
import { answer, attrBody, fetchBody, FrameReader, namesBody, OP, openBody } from '../../actors/objstore-mount/native-wire.js';

/** A frame as the C program sends it: u32 length, u32 n, u8 op, body. */
function frame(n: number, op: number, body: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUInt32LE(5 + body.length, 0);
  head.writeUInt32LE(n, 4);
  head[8] = op;
  return Buffer.concat([head, body]);
}

test('every op decodes; frames split at every byte arrive whole and in order', (t) => {
  const open = Buffer.alloc(4);
  open.writeUInt32LE(0o100000, 0);
  const fetch = Buffer.alloc(13);
  fetch.writeBigUInt64LE(3n * 16n * 1024n * 1024n, 0);
  fetch.writeUInt32LE(16 << 20, 8);
  fetch[12] = 1;
  const release = Buffer.alloc(8);
  release.writeBigUInt64LE(32n << 20n, 0);
  const all = Buffer.concat([
    frame(0, OP.MOUNTED),
    frame(1, OP.GETATTR, Buffer.from('/a/odd name %20 ü.txt')),
    frame(2, OP.READDIR, Buffer.from('/')),
    frame(3, OP.OPEN, Buffer.concat([open, Buffer.from('/$0123')])),
    frame(4, OP.FETCH, Buffer.concat([fetch, Buffer.from('obj-id')])),
    frame(0, OP.RELEASE, release),
  ]);
  const want = [
    { n: 0, op: OP.MOUNTED },
    { n: 1, op: OP.GETATTR, path: '/a/odd name %20 ü.txt' },
    { n: 2, op: OP.READDIR, path: '/' },
    { n: 3, op: OP.OPEN, flags: 0o100000, path: '/$0123' },
    { n: 4, op: OP.FETCH, start: 48 << 20, length: 16 << 20, ahead: true, id: 'obj-id' },
    { n: 0, op: OP.RELEASE, slot: 32 << 20 },
  ];
  t.deepEqual(new FrameReader().push(all), want);
  for (const step of [1, 2, 7, 13]) {
    const r = new FrameReader();
    const got = [];
    for (let i = 0; i < all.length; i += step) got.push(...r.push(all.subarray(i, i + step)));
    t.deepEqual(got, want, `chunks of ${step} bytes`);
  }
});

test('a bad length or an unknown op is refused, naming it', (t) => {
  const short = Buffer.alloc(8);
  short.writeUInt32LE(3, 0);
  t.throws(() => new FrameReader().push(short), { message: /frame of 3 bytes/ });
  const huge = Buffer.alloc(4);
  huge.writeUInt32LE(0xffffffff, 0);
  t.throws(() => new FrameReader().push(huge), { message: /frame of 4294967295 bytes/ });
  t.throws(() => new FrameReader().push(frame(9, 42)), { message: /unknown op 42/ });
});

test('answers: n, code, then the body the C side reads', (t) => {
  const a = answer(7, -2);
  t.is(a.readUInt32LE(0), 8);
  t.is(a.readUInt32LE(4), 7);
  t.is(a.readInt32LE(8), -2);
  const attr = attrBody({ mode: 0o100444, nlink: 1, size: 2 ** 40 + 3, mtime: new Date(1_700_000_000_123) });
  t.is(attr.length, 24);
  t.is(attr.readUInt32LE(0), 0o100444);
  t.is(attr.readUInt32LE(4), 1);
  t.is(attr.readBigUInt64LE(8), 2n ** 40n + 3n);
  t.is(attr.readDoubleLE(16), 1_700_000_000_123);
  t.is(namesBody(['a', 'ü b', '']).toString('utf8'), 'a\0ü b\0\0');
  const o = openBody(5, 'id-x');
  t.is(o.readBigUInt64LE(0), 5n);
  t.is(o.subarray(8).toString(), 'id-x');
  const f = fetchBody(16 << 20, 1234);
  t.is(f.readBigUInt64LE(0), BigInt(16 << 20));
  t.is(f.readUInt32LE(8), 1234);
  const withBody = answer(1, 0, f);
  t.is(withBody.readUInt32LE(0), 8 + 12);
  t.true(withBody.subarray(12).equals(f));
});
