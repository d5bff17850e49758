/**
 * A 2 GiB object through the object store's port 80, in and out, on six sparse loop volumes
 * (issue 21 item 2: a Content-Length of 1e9 and more got an empty reply from the old server).
 * The PUT is a raw socket streaming the body (MD5 computed as it goes); the GET is read to its
 * end and its MD5 compared. FRONT_LARGE_GIB=5 runs it with 5 GiB (by hand: about two and a half
 * times longer; the volumes are sized for it).
 */
import { createHash, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { request } from 'node:http';
import test from 'ava';
import { startStore } from './harness.js';

const GIB = Number(process.env.FRONT_LARGE_GIB ?? 2);
const SIZE = GIB * 1024 ** 3;
/** Each of the six volumes holds a quarter of the object (4+2), with room to spare for XFS. */
const VOLUME_MIB = Math.max(1400, Math.ceil(((SIZE / 4) * 1.2) / 1024 ** 2) + 300);
const BLOCK = randomBytes(8 * 1024 * 1024);

test(`a ${GIB} GiB object streams in and out byte-exact`, async (t) => {
  t.timeout(15 * 60_000);
  const store = await startStore(t, { volumes: 6, sizeMiB: VOLUME_MIB });
  const port = Number(new URL(store.url).port);
  const want = createHash('md5');
  const started = Date.now();
  const answer = await new Promise<string>((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let got = '';
    sock.on('data', (d) => {
      got += d.toString('latin1');
      if (/\r\n\r\n/.test(got)) sock.end();
    });
    sock.on('close', () => resolve(got));
    sock.on('error', reject);
    sock.write(`PUT /large/object HTTP/1.1\r\nHost: x\r\nContent-Length: ${SIZE}\r\n\r\n`);
    let sent = 0;
    const pump = () => {
      while (sent < SIZE) {
        // Each block differs from the one before (its first 8 bytes are its offset).
        const block = Buffer.from(BLOCK);
        block.writeBigUInt64BE(BigInt(sent));
        want.update(block);
        sent += block.byteLength;
        if (!sock.write(block)) return void sock.once('drain', pump);
      }
    };
    pump();
  });
  const putMs = Date.now() - started;
  const md5 = want.digest('hex');
  t.regex(answer, /^HTTP\/1\.1 201 Created\r\n/);
  t.regex(answer, new RegExp(`Content-MD5: ${md5}`, 'i'));

  const getStarted = Date.now();
  const { status, length, digest, bytes } = await new Promise<{ status: number; length: string; digest: string; bytes: number }>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/large/object' }, (res) => {
      const h = createHash('md5');
      let bytes = 0;
      res.on('data', (d: Buffer) => {
        h.update(d);
        bytes += d.byteLength;
      });
      res.on('end', () => resolve({ status: res.statusCode!, length: String(res.headers['content-length']), digest: h.digest('hex'), bytes }));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
  t.is(status, 200);
  t.is(length, String(SIZE));
  t.is(bytes, SIZE);
  t.is(digest, md5);
  t.log(`PUT ${(SIZE / 1024 ** 2 / (putMs / 1000)).toFixed(0)} MiB/s, GET ${(SIZE / 1024 ** 2 / ((Date.now() - getStarted) / 1000)).toFixed(0)} MiB/s`);
});
