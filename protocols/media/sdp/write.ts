/**
 * Builds the SDP we send (answers and offers) with sdp-transform's writer.
 *
 * Shape: `o=- <sessionId> <sessionVersion> IN IP4|IP6 <address>`, `s=-`, session-level
 * `c=`, `t=0 0`; our audio section lists rtpmap for every PT (static ones too),
 * `a=fmtp:<te> 0-16` for telephone-event, `a=ptime:20`, the direction attribute always written,
 * `a=rtcp-mux` when muxed, `a=rtcp:<port>` as the caller says, and at most one `a=crypto`. A rejected section
 * is written as `m=<type> 0 <profile> <formats as offered>` with no attributes (RFC 3264 §6).
 */
import { write } from 'sdp-transform';
import type { MediaDescription, SessionDescription } from 'sdp-transform';
import type { Direction } from '../types.js';
import { rtpmapOf } from './codecs.js';
import { formatSdes } from './crypto.js';
import { ipFamily } from './parse.js';
import { fail, ok, type CodecChoice, type LocalMedia, type MLine, type Result, type SdesKey, type TelephoneEvent } from './types.js';

export const PTIME = 20;

export interface OurAudio {
  kind: 'audio';
  port: number;
  profile: string;
  codecs: readonly CodecChoice[];
  telephoneEvents: readonly TelephoneEvent[];
  crypto: SdesKey | null;
  /** The attribute we write (our point of view). */
  attribute: Direction;
  rtcpMux: boolean;
  /** Written as a=rtcp:<port> unless null (answers: when not muxed; offers: the non-mux fallback). */
  rtcpPort: number | null;
}

export type OutSection = OurAudio | { kind: 'rejected'; offered: MLine };

/** Validates the caller's local media description before it goes into an SDP. */
export function checkLocal(local: LocalMedia): Result<LocalMedia> {
  if (local.family !== 'IP4' && local.family !== 'IP6') return fail(`local family must be IP4 or IP6, got ${String(local.family)}`);
  if (ipFamily(local.address) !== local.family) return fail(`local address ${local.address} is not an ${local.family} literal`);
  for (const [n, p] of [['port', local.port], ['rtcpPort', local.rtcpPort]] as const) {
    if (!Number.isInteger(p) || p <= 0 || p > 65535) return fail(`local ${n} ${p} out of range`);
  }
  if (!/^\d{1,20}$/.test(local.sessionId)) return fail(`o= session id must be digits, got "${local.sessionId}"`);
  if (!Number.isSafeInteger(local.sessionVersion) || local.sessionVersion < 0) return fail(`o= session version must be a non-negative integer, got ${local.sessionVersion}`);
  return ok(local);
}

function audioSection(a: OurAudio): MediaDescription {
  const pts = [...a.codecs.map((c) => c.pt), ...a.telephoneEvents.map((t) => t.pt)];
  const m: MediaDescription = {
    type: 'audio',
    port: a.port,
    protocol: a.profile,
    payloads: pts.join(' '),
    rtp: [
      ...a.codecs.map(rtpmapOf),
      ...a.telephoneEvents.map((t) => ({ payload: t.pt, codec: 'telephone-event', rate: t.clockRate })),
    ],
    fmtp: a.telephoneEvents.map((t) => ({ payload: t.pt, config: '0-16' })),
    ptime: PTIME,
    direction: a.attribute,
  };
  if (a.rtcpMux) m.rtcpMux = 'rtcp-mux';
  if (a.rtcpPort !== null) m.rtcp = { port: a.rtcpPort };
  if (a.crypto) {
    const [id, suite, config] = formatSdes(a.crypto).split(' ') as [string, string, string];
    m.crypto = [{ id: Number(id), suite, config }];
  }
  return m;
}

export function writeSdp(local: LocalMedia, sections: readonly OutSection[]): string {
  const ipVer = local.family === 'IP4' ? 4 : 6;
  const session: SessionDescription = {
    version: 0,
    origin: { username: '-', sessionId: local.sessionId, sessionVersion: local.sessionVersion, netType: 'IN', ipVer, address: local.address },
    name: '-',
    connection: { version: ipVer, ip: local.address },
    timing: { start: 0, stop: 0 },
    media: sections.map((s): MediaDescription => (s.kind === 'audio'
      ? audioSection(s)
      : { type: s.offered.type, port: 0, protocol: s.offered.protocol, payloads: s.offered.formats.join(' '), rtp: [], fmtp: [] })),
  };
  return write(session);
}
