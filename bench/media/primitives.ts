/**
 * Costs of the Node primitives on the bridge's per-packet path, measured on this machine, to
 * put numbers on the profile of the bridge (bench/media.bench.ts) without touching its code:
 *
 *   node dist/bench/media/primitives.js [--packets 200000]
 *
 * - UDP send of a 172-byte packet to a loopback sink in another process (sender CPU incl.
 *   kernel, per packet): unconnected with a callback from a socket bound to 0.0.0.0 (what
 *   sockets.ts does with the default bind address), the same bound to 127.0.0.1, unconnected
 *   without a callback, connected without, all with an AsyncLocalStorage store active (as in
 *   an actor);
 * - HMAC-SHA1 of 172 bytes: createHmac with a KeyObject (protocols/media/srtp today), with a
 *   Buffer key, and precomputed ipad/opad SHA-1 states copied per packet (Hash.copy);
 * - AES-128-CM of 160 bytes: long-lived ECB + JS XOR (today) vs a fresh aes-128-ctr cipher;
 * - the bridge's own SrtpSendContext.protectRtp / SrtpReceiveContext.unprotectRtp on a 172-byte
 *   packet, 200 contexts used round robin (as 200 calls would);
 * - a prom-client Counter.inc({ kind }) vs a plain number, and Buffer.concat of header+payload.
 * Prints one line per case (µs per operation, median of 5 rounds) and a JSON line.
 */
import { spawn } from 'node:child_process';
import { AsyncLocalStorage } from 'node:async_hooks';
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import { parseArgs } from 'node:util';
import client from 'prom-client';
import { median } from '../lib/stats.js';
import { SrtpReceiveContext, SrtpSendContext } from '../../protocols/media/srtp/index.js';

const { values } = parseArgs({ options: { packets: { type: 'string', default: '200000' } } });
const PACKETS = Number(values.packets);
const ROUNDS = 5;

function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** µs of our CPU per op: `fn` runs `n` ops, in batches that yield to the event loop. */
async function perOp(n: number, batch: number, fn: (i: number) => void): Promise<number> {
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const c0 = cpuUs();
    for (let i = 0; i < n; ) {
      const end = Math.min(n, i + batch);
      for (; i < end; i++) fn(i);
      await new Promise((res) => setImmediate(res));
    }
    await new Promise((res) => setTimeout(res, 20)); // callbacks and ticks of the last batch
    rounds.push((cpuUs() - c0 - 20) / n);
  }
  return Math.round(median(rounds) * 100) / 100;
}

async function udpCases(): Promise<Record<string, number>> {
  const sink = spawn(process.execPath, ['-e', "const s=require('dgram').createSocket({type:'udp4',recvBufferSize:8<<20});s.on('message',()=>{});s.bind(0,'127.0.0.1',()=>console.log(s.address().port))"], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((res) => sink.stdout!.once('data', (d) => res(Number(String(d).trim()))));
    const open = async (connect: boolean, address = '127.0.0.1') => {
      const s = dgram.createSocket({ type: 'udp4', sendBufferSize: 1 << 20 });
      await new Promise<void>((r) => s.bind(0, address, () => r()));
      if (connect) await new Promise<void>((r) => s.connect(port, '127.0.0.1', () => r()));
      return s;
    };
    const pkt = Buffer.alloc(172, 0x55);
    const als = new AsyncLocalStorage<object>();
    const out: Record<string, number> = {};
    const batch = 50; // ~ what one event-loop turn of a media thread handles at 20k pkt/s
    await als.run({}, async () => {
      const any = await open(false, '0.0.0.0'); // the bridge binds its RTP sockets to 0.0.0.0 by default
      out.udp_unconnected_cb_any_us = await perOp(PACKETS, batch, () => any.send(pkt, port, '127.0.0.1', () => undefined));
      any.close();
      const u = await open(false);
      out.udp_unconnected_cb_us = await perOp(PACKETS, batch, () => u.send(pkt, port, '127.0.0.1', () => undefined));
      out.udp_unconnected_nocb_us = await perOp(PACKETS, batch, () => u.send(pkt, port, '127.0.0.1'));
      u.close();
      const c = await open(true);
      out.udp_connected_nocb_us = await perOp(PACKETS, batch, () => c.send(pkt));
      c.close();
    });
    return out;
  } finally {
    sink.kill();
  }
}

async function cryptoCases(): Promise<Record<string, number>> {
  const data = crypto.randomBytes(172);
  const key = crypto.randomBytes(20);
  const keyObj = crypto.createSecretKey(key);
  const roc = Buffer.alloc(4);
  const n = PACKETS / 2;
  const out: Record<string, number> = {};
  out.hmac_keyobject_us = await perOp(n, 1000, () => crypto.createHmac('sha1', keyObj).update(data).update(roc).digest());
  out.hmac_buffer_key_us = await perOp(n, 1000, () => crypto.createHmac('sha1', key).update(data).update(roc).digest());
  const pad = (b: number) => Buffer.from(Buffer.concat([key, Buffer.alloc(44)]).map((x) => x ^ b));
  const inner = crypto.createHash('sha1').update(pad(0x36));
  const outer = crypto.createHash('sha1').update(pad(0x5c));
  const viaCopy = () => outer.copy().update(inner.copy().update(data).update(roc).digest()).digest();
  const check = crypto.createHmac('sha1', key).update(data).update(roc).digest();
  if (!viaCopy().equals(check)) throw new Error('precomputed HMAC differs from createHmac');
  out.hmac_precomputed_copy_us = await perOp(n, 1000, viaCopy);

  const aesKey = crypto.randomBytes(16);
  const ecb = crypto.createCipheriv('aes-128-ecb', aesKey, null);
  ecb.setAutoPadding(false);
  const ctr = Buffer.alloc(176);
  const payload = crypto.randomBytes(160);
  const dst = Buffer.alloc(160);
  out.aes_ecb_plus_js_xor_us = await perOp(n, 1000, (i) => {
    ctr.writeUInt32BE(i, 0);
    for (let b = 1; b < 11; b++) ctr.copyWithin(b * 16, 0, 14), (ctr[b * 16 + 15] = b);
    const ks = ecb.update(ctr);
    for (let j = 0; j < 160; j++) dst[j] = payload[j]! ^ ks[j]!;
  });
  const iv = Buffer.alloc(16);
  out.aes_ctr_fresh_cipher_us = await perOp(n, 1000, (i) => {
    iv.writeUInt32BE(i, 0);
    crypto.createCipheriv('aes-128-ctr', aesKey, iv).update(payload);
  });
  const contexts = Array.from({ length: 200 }, () => {
    const key = crypto.randomBytes(30);
    return { tx: new SrtpSendContext('AES_CM_128_HMAC_SHA1_80', key), rx: new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_80', key), seq: 0, ssrc: crypto.randomInt(1, 2 ** 31) };
  });
  const rtp = Buffer.alloc(172);
  rtp[0] = 0x80;
  const protectedPkts: Buffer[] = [];
  out.srtp_protect_us = await perOp(n, 1000, (i) => {
    const c = contexts[i % 200]!;
    rtp.writeUInt16BE(c.seq++ & 0xffff, 2);
    rtp.writeUInt32BE(c.ssrc, 8);
    const p = c.tx.protectRtp(rtp);
    if (i < 2000) protectedPkts.push(p);
  });
  // unprotect: replay protection would refuse repeats, so protect fresh packets in a first pass and time the second
  const fresh = Array.from({ length: 200 }, () => ({ key: crypto.randomBytes(30), ssrc: crypto.randomInt(1, 2 ** 31) }));
  const rxs = fresh.map((f) => new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_80', f.key));
  const txs = fresh.map((f) => new SrtpSendContext('AES_CM_128_HMAC_SHA1_80', f.key));
  const m = Math.min(n, 50_000);
  const pkts = Array.from({ length: m * ROUNDS }, (_, i) => {
    const f = fresh[i % 200]!;
    rtp.writeUInt16BE(Math.floor(i / 200) & 0xffff, 2);
    rtp.writeUInt32BE(f.ssrc, 8);
    return txs[i % 200]!.protectRtp(rtp);
  });
  let k = 0;
  out.srtp_unprotect_us = await perOp(m, 1000, () => {
    const r = rxs[k % 200]!.unprotectRtp(pkts[k]!);
    k++;
    if (typeof r === 'string') throw new Error(`unprotect: ${r}`);
  });
  return out;
}

async function smallCases(): Promise<Record<string, number>> {
  const reg = new client.Registry();
  const counter = new client.Counter({ name: 'x_total', help: 'x', labelNames: ['kind'], registers: [reg] });
  const n = PACKETS * 2;
  let plain = 0;
  const header = Buffer.alloc(12);
  const payload = Buffer.alloc(160);
  const out: Record<string, number> = {};
  out.prom_counter_inc_labels_us = await perOp(n, 1000, () => counter.inc({ kind: 'forwarded' }));
  out.plain_number_inc_us = await perOp(n, 1000, () => void plain++);
  out.buffer_concat_us = await perOp(n, 1000, () => Buffer.concat([header, payload]));
  out.alloc_unsafe_copy_us = await perOp(n, 1000, () => {
    const b = Buffer.allocUnsafe(172);
    header.copy(b, 0);
    payload.copy(b, 12);
  });
  return out;
}

const results = { ...(await udpCases()), ...(await cryptoCases()), ...(await smallCases()) };
for (const [k, v] of Object.entries(results)) console.log(`${k.padEnd(28)} ${v.toFixed(2).padStart(7)} µs`);
console.log(JSON.stringify({ bench: 'media-primitives', node: process.version, packets: PACKETS, ...results }));
