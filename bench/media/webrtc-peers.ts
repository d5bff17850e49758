/**
 * The peers of bench/media-webrtc.bench.ts, one pair per call: a werift client (0.24.4, the
 * bridge's own WebRTC stack; Chromium is too heavy to run by the dozen on 2 cores) that offers
 * Opus only, and a UDP socket that offers PCMU, so the bridge transcodes both ways (Opus ↔
 * PCMU through its mixer). Both send a pre-encoded tone every 20 ms (one shared timer) and
 * record what they receive per stream: packets, and the inter-arrival deviation from 20 ms
 * (the bridge's own 20 ms clock makes both streams, so there is no send time to compare with:
 * the added jitter is read as arrival irregularity, the receiver's event loop included).
 */
import dgram from 'node:dgram';
import { RTCPeerConnection, RTCRtpCodecParameters, RtpPacket, type MediaStreamTrack, type RTCRtpTransceiver } from 'werift';
import type { MediaBridgeClient } from '../../actors/media-bridge/client.js';
import { createEncoder } from '../../actors/media-session/codecs.js';
import { ulawEncode } from '../../protocols/media/codecs/g711.js';
import { buildRtp } from '../../protocols/media/rtp.js';
import { Hist } from './hist.js';
import { HOST, legSdp, parseRelaySdp } from './sdp.js';

/** One second of a tone as 50 encoded 20 ms frames. */
function toneFrames(rate: number, freq: number, encode: (pcm: Int16Array) => Uint8Array): Uint8Array[] {
  const n = rate / 50;
  return Array.from({ length: 50 }, (_, f) => {
    const pcm = new Int16Array(n);
    for (let i = 0; i < n; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * freq * (f * n + i)) / rate));
    return Uint8Array.from(encode(pcm));
  });
}

let frames: { opus: Uint8Array[]; pcmu: Uint8Array[] } | null = null;
function encodedTones() {
  const opus = createEncoder('opus');
  frames ??= { opus: toneFrames(48000, 600, (p) => opus.encode(p)), pcmu: toneFrames(8000, 1000, (p) => ulawEncode(p)) };
  return frames;
}

/** What one receiving stream saw. */
export class StreamStats {
  packets = 0;
  private last = 0;
  /** Count a packet that arrived at `now` (ms) during the measured window. */
  arrive(now: number, iat: Hist): void {
    if (this.last) iat.add(now - this.last - 20);
    this.last = now;
    this.packets++;
  }
}

export interface Call {
  webrtc: { pc: RTCPeerConnection; transceiver: RTCRtpTransceiver; rx: StreamStats; seq: number; ts: number };
  rtp: { socket: dgram.Socket; port: number; bridgePort: number; rx: StreamStats; seq: number; ts: number };
  sessionId: string;
}

/** The shared receive-side measurements of a run. */
export interface Window {
  open: boolean;
  iat: Hist;
}

/** Make one call through session commands on `c`: werift client ↔ WebRTC endpoint, UDP socket ↔ RTP endpoint. */
export async function setUpCall(c: MediaBridgeClient, w: Window): Promise<Call> {
  const s = await c.call('session.create', {});
  const pc = new RTCPeerConnection({
    iceServers: [],
    iceUseIpv6: false,
    iceAdditionalHostAddresses: [HOST],
    codecs: { audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: 111 })], video: [] },
  });
  const transceiver = pc.addTransceiver('audio', { direction: 'sendrecv' });
  const call: Call = {
    webrtc: { pc, transceiver, rx: new StreamStats(), seq: 0, ts: 0 },
    rtp: { socket: dgram.createSocket('udp4'), port: 0, bridgePort: 0, rx: new StreamStats(), seq: 0, ts: 0 },
    sessionId: String(s.session_id),
  };
  const tracks = new WeakSet<MediaStreamTrack>();
  pc.onTrack.subscribe((track: MediaStreamTrack) => {
    if (tracks.has(track)) return;
    tracks.add(track);
    track.onReceiveRtp.subscribe(() => {
      if (w.open) call.webrtc.rx.arrive(performance.now(), w.iat);
    });
  });
  const connected = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the werift client did not connect within 20 s')), 20_000);
    pc.connectionStateChange.subscribe((st) => {
      if (st === 'connected') {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  await pc.setLocalDescription(await pc.createOffer());
  const answer = await c.call('endpoint.webrtc.create_from_offer', { sdp: pc.localDescription!.sdp, direction: 'sendrecv' });
  await pc.setRemoteDescription({ type: 'answer', sdp: String(answer.sdp_answer) });
  const sock = call.rtp.socket;
  await new Promise<void>((r) => sock.bind(0, HOST, r));
  call.rtp.port = sock.address().port;
  sock.on('message', () => {
    if (w.open) call.rtp.rx.arrive(performance.now(), w.iat);
  });
  const rtp = await c.call('endpoint.rtp.create_from_offer', { sdp: legSdp(call.rtp.port, null) });
  call.rtp.bridgePort = parseRelaySdp(String(rtp.sdp_answer)).port;
  await connected;
  return call;
}

/** Every call sends one frame each way (werift client: Opus; UDP socket: PCMU). */
export function sendFrame(calls: Call[], frame: number): void {
  const { opus, pcmu } = encodedTones();
  for (const call of calls) {
    const w = call.webrtc;
    const pkt = buildRtp({ marker: false, payloadType: 111, sequenceNumber: w.seq, timestamp: w.ts >>> 0, ssrc: 0 }, opus[frame % 50]!);
    w.seq = (w.seq + 1) & 0xffff;
    w.ts += 960;
    void w.transceiver.sender.sendRtp(RtpPacket.deSerialize(pkt)).catch(() => undefined);
    const r = call.rtp;
    r.socket.send(buildRtp({ marker: false, payloadType: 0, sequenceNumber: r.seq, timestamp: r.ts >>> 0, ssrc: 0x1234 }, pcmu[frame % 50]!), r.bridgePort, HOST);
    r.seq = (r.seq + 1) & 0xffff;
    r.ts += 160;
  }
}

export async function closeCall(c: MediaBridgeClient, call: Call): Promise<void> {
  await c.call('session.attach', { session_id: call.sessionId }).then(() => c.call('session.destroy', {})).catch(() => undefined);
  await call.webrtc.pc.close().catch(() => undefined);
  call.rtp.socket.close();
}
