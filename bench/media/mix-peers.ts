/**
 * The mix bench's parts (media-mix.bench.ts): the bridge in this process on one media group thread
 * (so "the session thread" is one OS thread whose CPU /proc gives in ns), a pool of command
 * connections, and the bench's RTP peers: UDP sockets that send a sine (PCMU or Opus, encoded
 * once up front and looped, so the generator costs little) and keep what they receive for
 * loss and jitter. One home for these, so each bench part only says what it sets up.
 */
import dgram from 'node:dgram';
import { Worker } from 'node:worker_threads';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActorSystem } from '../../runtime/system.js';
import { MediaBridgeClient } from '../../actors/media-bridge/client.js';
import { BRIDGE_ID, type BridgeProtocol } from '../../actors/media-bridge/messages.js';
import { BRIDGE_MODULE, bridgeArgs, mediaSettings } from '../../actors/media/service.js';
import { resolve } from '../../runtime/config/settings.js';
import { buildRtp, parseRtp } from '../../protocols/media/rtp.js';
import { ulawEncode } from '../../protocols/media/codecs/g711.js';
import { HOST } from './sdp.js';
import { Pool } from './relay.js';

export type LegCodec = 'pcmu' | 'opus';

/** ns a thread has run (schedstat's first field; finer than the 10 ms ticks of stat). */
function threadNs(tid: string): number {
  try {
    return Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}

const tids = (): string[] => fs.readdirSync('/proc/self/task');

export interface InProcessBridge {
  url: string;
  /** The threads the bridge started so far (its group thread among them; read when measuring: some start late). */
  threads(): string[];
  /** Command connections, one job at a time each (a connection runs its commands in order). */
  pool: Pool<MediaBridgeClient>;
  stop(): Promise<void>;
}

/** The bridge on one group thread, local files from `fileDir`, `connections` command connections. */
export async function startBridge(o: { fileDir: string; connections: number }): Promise<InProcessBridge> {
  const before = new Set(tids());
  const stateDir = mkdtempSync(join(tmpdir(), 'hostd-bench-mix-'));
  const system = await ActorSystem.start({ stateDir, logLevel: 'silent', groupThreads: 1, poolThreads: 1 });
  const args = bridgeArgs({
    ...resolve(mediaSettings, {}, {}),
    port: 0,
    rtpPortMin: 61000,
    rtpPortMax: 64999,
    rtpBindAddress: HOST,
    mediaTimeoutMs: 600_000,
    orphanTimeoutMs: 1000,
    maxSessions: 100_000,
    maxSessionsPerConnection: 100_000,
    fileDir: o.fileDir,
  });
  await system.start({ id: 'media.supervisor', children: [{ id: BRIDGE_ID, module: BRIDGE_MODULE, args }] });
  const info = await system.ref<BridgeProtocol>(BRIDGE_ID).request({ type: 'info' });
  const url = `ws://127.0.0.1:${info.port}/`;
  const conns = await Promise.all(Array.from({ length: o.connections }, () => MediaBridgeClient.connect(url, { timeoutMs: 30_000 })));
  return {
    url,
    threads: () => tids().filter((t) => !before.has(t)),
    pool: new Pool(conns.slice()),
    async stop() {
      await Promise.all(conns.map((c) => c.close().catch(() => undefined)));
      await system.shutdown();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** CPU of the bridge's threads between two reads: the busiest (the session thread) and all of them. */
export function threadClock(threads: string[]): () => { busiestNs: number; allNs: number } {
  const t0 = new Map(threads.map((t) => [t, threadNs(t)]));
  return () => {
    let busiest = 0;
    let all = 0;
    for (const [t, v] of t0) {
      const d = threadNs(t) - v;
      if (!Number.isFinite(d)) continue;
      all += d;
      busiest = Math.max(busiest, d);
    }
    return { busiestNs: busiest, allNs: all };
  };
}

/** The bench peer's SDP: one section, PCMU (0) or Opus (111), on its port. */
export function peerSdp(port: number, codec: LegCodec, direction = 'sendrecv'): string {
  const m = codec === 'opus' ? ['111', 'a=rtpmap:111 opus/48000/2'] : ['0', 'a=rtpmap:0 PCMU/8000'];
  return ['v=0', `o=- ${port} 1 IN IP4 ${HOST}`, 's=-', `c=IN IP4 ${HOST}`, 't=0 0', `m=audio ${port} RTP/AVP ${m[0]}`, m[1], 'a=ptime:20', `a=${direction}`, ''].join('\r\n');
}

type OpusEncoderCtor = new (rate: number, channels: number) => { encode(pcm: Buffer): Buffer };

/** One second (50 frames) of a sine at `freq` (a whole number of Hz: the second loops seamlessly), encoded. */
export function sineFrames(codec: LegCodec, freq: number, amplitude = 2500): Buffer[] {
  const rate = codec === 'opus' ? 48000 : 8000;
  const n = rate / 50;
  const enc = codec === 'opus' ? new (createRequire(import.meta.url)('@discordjs/opus').OpusEncoder as OpusEncoderCtor)(48000, 1) : null;
  const out: Buffer[] = [];
  for (let f = 0; f < 50; f++) {
    const pcm = new Int16Array(n);
    for (let k = 0; k < n; k++) pcm[k] = Math.round(amplitude * Math.sin((2 * Math.PI * freq * (f * n + k)) / rate));
    out.push(enc ? enc.encode(Buffer.from(pcm.buffer)) : Buffer.from(ulawEncode(pcm)));
  }
  return out;
}

/** What a peer received inside the measured window: count, sequence span and transit jitter. */
export interface PeerStats {
  received: number;
  expected: number;
  /** |Δarrival − Δtimestamp| per consecutive pair, ms. */
  jitterMs: number[];
}

/** A bench RTP peer: a socket on loopback; it records arrivals while `recording` is on. */
export class BenchPeer {
  recording = false;
  private seqFirst = -1;
  private seqLast = -1;
  private count = 0;
  private last: { at: number; ts: number } | null = null;
  private jitter: number[] = [];
  private constructor(readonly socket: dgram.Socket, readonly port: number, private readonly rate: number) {
    socket.on('message', (msg) => {
      if (!this.recording || (msg.length >= 2 && msg[1]! >= 192 && msg[1]! <= 223)) return;
      const h = parseRtp(msg);
      if (!h) return;
      const at = performance.now();
      // Sequence numbers unwrapped against the previous one (a window holds far fewer than 32768).
      const seq = this.seqLast < 0 ? h.sequenceNumber : this.seqLast + ((h.sequenceNumber - (this.seqLast & 0xffff) + 0x10000) & 0xffff);
      if (this.seqFirst < 0) this.seqFirst = seq;
      this.seqLast = Math.max(this.seqLast, seq);
      this.count++;
      if (this.last) this.jitter.push(Math.abs(at - this.last.at - (((h.timestamp - this.last.ts) >>> 0) * 1000) / this.rate));
      this.last = { at, ts: h.timestamp };
    });
  }

  static async open(codec: LegCodec): Promise<BenchPeer> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((r) => socket.bind(0, HOST, () => r()));
    return new BenchPeer(socket, socket.address().port, codec === 'opus' ? 48000 : 8000);
  }

  stats(): PeerStats {
    return { received: this.count, expected: this.seqFirst < 0 ? 0 : this.seqLast - this.seqFirst + 1, jitterMs: this.jitter };
  }

  close(): void {
    try {
      this.socket.close();
    } catch {
      /* closed */
    }
  }
}

/**
 * Send each stream's frames to its bridge port every 20 ms on the wall clock (a late tick sends
 * what is due), until stopped. Returns the stop function.
 */
export function sendLoop(streams: Array<{ peer: BenchPeer; port: number; frames: Buffer[]; pt: number; ssrc: number; tsStep: number }>): () => void {
  const start = performance.now();
  let sent = 0;
  const timer = setInterval(() => {
    const due = Math.floor((performance.now() - start) / 20) + 1;
    for (; sent < due; sent++)
      for (const s of streams) {
        const packet = buildRtp({ marker: sent === 0, payloadType: s.pt, sequenceNumber: sent & 0xffff, timestamp: (sent * s.tsStep) >>> 0, ssrc: s.ssrc }, s.frames[sent % s.frames.length]!);
        s.peer.socket.send(packet, s.port, HOST);
      }
  }, 5);
  return () => clearInterval(timer);
}

/** Loss % and p50/p99 jitter over many peers' windows; a peer that got nothing lost `windowFrames`. */
export function summarize(stats: PeerStats[], windowFrames: number): { received: number; loss_pct: number; jitter_p50_ms: number; jitter_p99_ms: number } {
  const received = stats.reduce((n, s) => n + s.received, 0);
  const expected = stats.reduce((n, s) => n + (s.expected || windowFrames), 0);
  const all = stats.flatMap((s) => s.jitterMs).sort((a, b) => a - b);
  const q = (p: number) => (all.length ? all[Math.min(all.length - 1, Math.floor(p * all.length))]! : Number.NaN);
  return { received, loss_pct: expected ? Math.max(0, (100 * (expected - received)) / expected) : 100, jitter_p50_ms: q(0.5), jitter_p99_ms: q(0.99) };
}

/**
 * The floor of the jitter figure: a worker thread of this process that sends one 12-byte RTP
 * packet every 20 ms of the wall clock (each timer aimed at its due time) to `peer`. It has no
 * work to do, so what `peer` measures of it is the machine's (timers, scheduling, the receiving
 * loop), not the bridge's. Returns the stop function.
 */
export function floorSource(peer: BenchPeer): () => void {
  const code = `
    const dgram = require('node:dgram');
    const { workerData, parentPort } = require('node:worker_threads');
    const s = dgram.createSocket('udp4');
    const start = performance.now();
    let n = 0;
    let timer = null;
    const send = () => {
      const b = Buffer.alloc(12);
      b[0] = 0x80; b.writeUInt16BE(n & 0xffff, 2); b.writeUInt32BE((n * 160) >>> 0, 4); b.writeUInt32BE(0xf100f, 8);
      s.send(b, workerData.port, workerData.host);
      n++;
      timer = setTimeout(send, Math.max(0, start + n * 20 - performance.now()));
    };
    send();
    parentPort.on('message', () => { clearTimeout(timer); s.close(); parentPort.close(); });
  `;
  const w = new Worker(code, { eval: true, workerData: { port: peer.port, host: HOST } });
  return () => w.postMessage('stop');
}
