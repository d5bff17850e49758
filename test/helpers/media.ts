/**
 * Media bridge test harness: a bridge in-process on ephemeral ports, a typed client, and RTP
 * peers (a UDP socket of the test, or ffmpeg) that send and receive real packets.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { ActorSystem } from '../../runtime/system.js';
import { MediaBridgeClient, MediaBridgeError } from '../../actors/media-bridge/client.js';
import { BRIDGE_ID, type BridgeArgs, type BridgeProtocol } from '../../actors/media-bridge/messages.js';
import { BRIDGE_MODULE, bridgeArgs, mediaSettings, type MediaValues } from '../../actors/media/service.js';
import { resolve } from '../../runtime/config/settings.js';
import { buildRtp, parseRtp } from '../../protocols/media/rtp.js';
import { SrtpReceiveContext, SrtpSendContext } from '../../protocols/media/srtp/index.js';
import { alawEncode, ulawDecode, ulawEncode } from '../../protocols/media/codecs/g711.js';
import type { SrtpSuite } from '../../protocols/media/types.js';

export interface Bridge {
  system: ActorSystem;
  url: string;
  args: BridgeArgs;
  connect(token?: string): Promise<MediaBridgeClient>;
}

/** A bridge on an ephemeral command port and a random slice of the RTP port range. */
export async function startBridge(t: ExecutionContext, values: Partial<MediaValues> = {}, groupThreads = 2): Promise<Bridge> {
  const stateDir = mkdtempSync(join(tmpdir(), 'hostd-media-'));
  const system = await ActorSystem.start({ stateDir, logLevel: process.env.TEST_LOG_LEVEL ?? 'silent', groupThreads, poolThreads: 1 });
  const clients: MediaBridgeClient[] = [];
  t.teardown(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await system.shutdown();
    rmSync(stateDir, { recursive: true, force: true });
  });
  const base = 20000 + Math.floor(Math.random() * 40) * 1000;
  const args = bridgeArgs({ ...resolve(mediaSettings, {}, {}), port: 0, rtpPortMin: base, rtpPortMax: base + 999, mediaTimeoutMs: 30_000, orphanTimeoutMs: 60_000, ...values });
  await system.start({ id: 'media.supervisor', children: [{ id: BRIDGE_ID, module: BRIDGE_MODULE, args }] });
  const info = await system.ref<BridgeProtocol>(BRIDGE_ID).request({ type: 'info' });
  const url = `ws://127.0.0.1:${info.port}/`;
  return {
    system,
    url,
    args,
    async connect(token?: string) {
      const c = await MediaBridgeClient.connect(url, { token });
      clients.push(c);
      return c;
    },
  };
}

/** A bridge, a connection to it, and a session bound to that connection. */
export async function bridgeSession(t: ExecutionContext, values: Partial<MediaValues> = {}): Promise<{ bridge: Bridge; c: MediaBridgeClient; sessionId: string }> {
  const bridge = await startBridge(t, values);
  const c = await bridge.connect();
  const { session_id } = await c.call('session.create', {});
  return { bridge, c, sessionId: session_id };
}

export interface Received {
  seq: number;
  ts: number;
  pt: number;
  ssrc: number;
  marker: boolean;
  payload: Buffer;
  at: number;
}

/** A UDP socket of the test that plays an RTP peer. */
export class RtpPeer {
  readonly received: Received[] = [];
  readonly raw: Buffer[] = [];
  authFailures = 0;
  recvSrtp: SrtpReceiveContext | null = null;
  private timers = new Set<NodeJS.Timeout>();

  private constructor(readonly socket: dgram.Socket, readonly port: number) {
    socket.on('message', (msg) => {
      if (msg.length >= 2 && msg[1]! >= 192 && msg[1]! <= 223) return; // RTCP
      this.raw.push(msg);
      let packet: Uint8Array = msg;
      if (this.recvSrtp) {
        const r = this.recvSrtp.unprotectRtp(msg);
        if (typeof r === 'string') {
          this.authFailures++;
          return;
        }
        packet = r;
      }
      const h = parseRtp(packet);
      if (!h) return;
      this.received.push({ seq: h.sequenceNumber, ts: h.timestamp, pt: h.payloadType, ssrc: h.ssrc, marker: h.marker, payload: Buffer.from(packet.subarray(h.headerLength, h.headerLength + h.payloadLength)), at: Date.now() });
    });
  }

  static async open(t: ExecutionContext): Promise<RtpPeer> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
    const peer = new RtpPeer(socket, socket.address().port);
    t.teardown(() => peer.close());
    return peer;
  }

  /** An SDP offer (or answer) for this peer: one audio section on its port. */
  sdp(o: { codecs?: string[]; direction?: string; crypto?: { suite: SrtpSuite; key: Buffer }; profile?: string; te?: boolean; mux?: boolean } = {}): string {
    const codecs = o.codecs ?? ['0 PCMU/8000'];
    const pts = codecs.map((c) => c.split(' ')[0]);
    if (o.te) pts.push('101');
    const lines = [
      'v=0',
      `o=- ${Date.now()} 1 IN IP4 127.0.0.1`,
      's=test peer',
      'c=IN IP4 127.0.0.1',
      't=0 0',
      `m=audio ${this.port} ${o.profile ?? (o.crypto ? 'RTP/SAVP' : 'RTP/AVP')} ${pts.join(' ')}`,
      ...codecs.map((c) => `a=rtpmap:${c}`),
      ...(o.te ? ['a=rtpmap:101 telephone-event/8000', 'a=fmtp:101 0-16'] : []),
      ...(o.crypto ? [`a=crypto:1 ${o.crypto.suite} inline:${o.crypto.key.toString('base64')}`] : []),
      'a=ptime:20',
      ...(o.mux ? ['a=rtcp-mux'] : []),
      `a=${o.direction ?? 'sendrecv'}`,
    ];
    return lines.join('\r\n') + '\r\n';
  }

  /**
   * Send `ms` of a sine (PCMU, or PCMA with pt 8; 20 ms packets, paced) to `to`. Resolves when the last packet is
   * sent. `srtp` protects every packet with the given send context.
   */
  sendSine(to: { address: string; port: number }, o: { freq: number; ms: number; ssrc?: number; pt?: number; srtp?: SrtpSendContext; seq?: number }): Promise<void> {
    const frames = Math.round(o.ms / 20);
    const ssrc = o.ssrc ?? 0x1234abcd;
    let seq = o.seq ?? 1000;
    let ts = 0;
    let phase = 0;
    let sent = 0;
    const step = (2 * Math.PI * o.freq) / 8000;
    return new Promise((resolve) => {
      const timer = setInterval(() => {
        const pcm = new Int16Array(160);
        for (let i = 0; i < 160; i++, phase += step) pcm[i] = Math.round(8000 * Math.sin(phase));
        const payload = o.pt === 8 ? alawEncode(pcm) : ulawEncode(pcm);
        let packet: Uint8Array = buildRtp({ marker: sent === 0, payloadType: o.pt ?? 0, sequenceNumber: seq & 0xffff, timestamp: ts >>> 0, ssrc }, payload);
        if (o.srtp) packet = o.srtp.protectRtp(packet);
        this.socket.send(packet, to.port, to.address);
        seq++;
        ts += 160;
        if (++sent >= frames) {
          clearInterval(timer);
          this.timers.delete(timer);
          resolve();
        }
      }, 20);
      this.timers.add(timer);
    });
  }

  /** PCMU payloads received so far, decoded and concatenated. */
  decodedPcmu(from = 0): Int16Array {
    const parts = this.received.slice(from).filter((r) => r.pt === 0).map((r) => ulawDecode(r.payload));
    const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }

  async waitFor(n: number, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.received.length < n && Date.now() < deadline) await sleep(20);
    if (this.received.length < n) throw new Error(`peer ${this.port} received ${this.received.length} packets, expected ${n}`);
  }

  close(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers.clear();
    try {
      this.socket.close();
    } catch {
      /* closed */
    }
  }
}

/** An RTP endpoint made from `peer`'s offer: its id, the answer and where the bridge listens. */
export async function leg(c: MediaBridgeClient, peer: RtpPeer, o: Parameters<RtpPeer['sdp']>[0] = {}) {
  const r = await c.call('endpoint.rtp.create_from_offer', { sdp: peer.sdp(o) });
  return { id: r.endpoint_id, answer: r.sdp_answer, bridge: mediaAddress(r.sdp_answer) };
}

/** The `m=audio` port and `c=` address of an SDP. */
export function mediaAddress(sdp: string): { address: string; port: number } {
  const port = Number(/^m=audio (\d+)/m.exec(sdp)?.[1]);
  const address = /^c=IN IP[46] (\S+)/m.exec(sdp)?.[1] ?? '127.0.0.1';
  return { address, port };
}

/** The first a=crypto key of an SDP. */
export function sdpKey(sdp: string): { suite: SrtpSuite; key: Buffer } {
  const m = /^a=crypto:\d+ (\S+) inline:([A-Za-z0-9+/=]+)/m.exec(sdp);
  if (!m) throw new Error('no a=crypto line in SDP');
  return { suite: m[1] as SrtpSuite, key: Buffer.from(m[2]!, 'base64') };
}

export function srtpSender(k: { suite: SrtpSuite; key: Buffer }): SrtpSendContext {
  return new SrtpSendContext(k.suite, k.key);
}

export function srtpReceiver(k: { suite: SrtpSuite; key: Buffer }): SrtpReceiveContext {
  return new SrtpReceiveContext(k.suite, k.key);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a call came to: `ok`, or `<CODE>: <message>` of its MediaBridgeError (anything else: `thrown: …`). */
export async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof MediaBridgeError ? `${err.code}: ${err.message}` : `thrown: ${(err as Error).message}`;
  }
}

/** Start ffmpeg with `args`; killed at teardown. Resolves with the process once spawned. */
export function ffmpeg(t: ExecutionContext, args: string[]): { proc: ChildProcess; done: Promise<number | null>; stderr: () => string } {
  const proc = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-nostdin', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d) => (err += d.toString()));
  const done = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  });
  return { proc, done, stderr: () => err };
}

/** Frequency estimate by zero crossings (robust for one clean sine). */
export function zeroCrossingFrequency(pcm: Int16Array, rate: number): number {
  let crossings = 0;
  for (let i = 1; i < pcm.length; i++) if ((pcm[i - 1]! < 0 && pcm[i]! >= 0) || (pcm[i - 1]! >= 0 && pcm[i]! < 0)) crossings++;
  return (crossings / 2) * (rate / pcm.length);
}
