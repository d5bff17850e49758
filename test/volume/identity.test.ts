import test from 'ava';
import { crc32c } from '@node-rs/crc32';
import { decodeIdentity, encodeIdentity, IDENTITY_BYTES, IDENTITY_FILE, IdentityError, SERVICE_DIR } from '../../protocols/objstore/identity.js';

const id = { instanceId: '3f2a9c1e-7b44-4d0a-9e51-0c6f2d8b9a17', volumeId: 0x01020304, createdAt: 1_795_320_376_123 };

test('the identity is 64 bytes with the volume id at 0x25', (t) => {
  const b = encodeIdentity(id);
  t.is(b.byteLength, IDENTITY_BYTES);
  const dv = new DataView(b.buffer);
  t.is(Buffer.from(b.subarray(0, 8)).toString('latin1'), 'OBJSTORE');
  t.is(dv.getUint16(0x08), 1);
  t.is(Buffer.from(b.subarray(0x10, 0x20)).toString('hex'), id.instanceId.replace(/-/g, ''));
  t.deepEqual([...b.subarray(0x25, 0x29)], [1, 2, 3, 4]);
  t.is(dv.getUint32(0x25), id.volumeId);
  t.is(Number(dv.getBigUint64(0x29)), id.createdAt);
  t.deepEqual([...b.subarray(0x0a, 0x10), ...b.subarray(0x20, 0x25), ...b.subarray(0x31, 0x3c)], new Array(22).fill(0));
  t.is(dv.getUint32(0x3c), crc32c(b.subarray(0, 0x3c)));
  t.deepEqual(decodeIdentity(b), id);
  t.is(SERVICE_DIR, 'objstore');
  t.is(IDENTITY_FILE, '.identity');
});

test('an upper-case instance id decodes in lower case; volume id 0 and 2^32-1 round-trip', (t) => {
  t.is(decodeIdentity(encodeIdentity({ ...id, instanceId: id.instanceId.toUpperCase() })).instanceId, id.instanceId);
  t.is(decodeIdentity(encodeIdentity({ ...id, volumeId: 0 })).volumeId, 0);
  t.is(decodeIdentity(encodeIdentity({ ...id, volumeId: 0xffffffff })).volumeId, 0xffffffff);
});

test('corrupt identities are refused, each with a message saying why', (t) => {
  const good = encodeIdentity(id);
  for (let i = 0; i < 64; i++) {
    const b = good.slice();
    b[i]! ^= 1;
    t.throws(() => decodeIdentity(b), { instanceOf: IdentityError }, `byte ${i}`);
  }
  const volByte = good.slice();
  volByte[0x28]! ^= 1;
  t.throws(() => decodeIdentity(volByte), { message: /CRC32C mismatch.*corrupt/ });
  const magic = good.slice();
  magic[0] = 0x78;
  t.throws(() => decodeIdentity(magic), { message: /bad magic "xBJSTORE".*not an identity file/ });
  t.throws(() => decodeIdentity(good.subarray(0, 63)), { message: /expected 64 bytes, got 63/ });
  t.throws(() => decodeIdentity(new Uint8Array(65)), { message: /expected 64 bytes, got 65/ });
  const v2 = good.slice();
  new DataView(v2.buffer).setUint16(8, 2);
  new DataView(v2.buffer).setUint32(0x3c, crc32c(v2.subarray(0, 0x3c)));
  t.throws(() => decodeIdentity(v2), { message: /version 2 is not supported/ });
});

test('encoding refuses bad arguments', (t) => {
  t.throws(() => encodeIdentity({ ...id, instanceId: 'not-a-uuid' }), { message: /instance id must be a UUID/ });
  t.throws(() => encodeIdentity({ ...id, volumeId: 2 ** 32 }), { message: /volume id/ });
  t.throws(() => encodeIdentity({ ...id, volumeId: -1 }), { message: /volume id/ });
  t.throws(() => encodeIdentity({ ...id, createdAt: -5 }), { message: /createdAt/ });
});
