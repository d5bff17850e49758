/**
 * SDP text → typed view of what negotiation needs (sdp-transform does the attribute parsing;
 * m= lines and a=crypto lines are read raw, because sdp-transform drops all but one SDES
 * session parameter and cannot read `port/count`).
 *
 * Decisions: the text must start with `v=0` (else "not SDP"); at most 64 KiB; media-level c=
 * overrides session-level c=, likewise a=sendrecv/sendonly/recvonly/inactive (default
 * sendrecv); a c= address must be an IP literal of the family it names (hostnames and
 * multicast `addr/ttl` are unsupported: this module does no DNS); session-level a=crypto is
 * ignored (RFC 4568 puts it at media level).
 */
import { parse as parseSdpText } from 'sdp-transform';
import type { Direction } from '../types.js';
import { isDirection } from './direction.js';
import { fail, ok, type Result } from './types.js';

export const MAX_SDP_LENGTH = 65536;

export type Family = 'IP4' | 'IP6';

export interface Connection {
  /** Family the c= line names, or null for an unknown `IPx`. */
  family: Family | null;
  address: string;
  /** Why this address cannot be used, or null. */
  problem: string | null;
}

export interface RtpMap {
  encoding: string;
  rate: number | null;
  channels: number | null;
}

export interface SectionView {
  index: number;
  type: string;
  port: number;
  /** Set when the m= port has a port count (`49170/2`): unsupported. */
  portCount: number | null;
  protocol: string;
  /** Raw format tokens of the m= line, as written. */
  formats: string[];
  connection: Connection | null;
  direction: Direction;
  rtpmap: Map<number, RtpMap>;
  rtcpMux: boolean;
  rtcp: { port: number; connection: Connection | null } | null;
  /** Raw a=crypto values, in order. */
  crypto: string[];
  ptime: number | null;
}

export interface SdpView {
  sections: SectionView[];
}

const IP4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

function isIp6(s: string): boolean {
  if (!/^[0-9A-Fa-f:.]+$/.test(s) || !s.includes(':')) return false;
  const dbl = s.split('::');
  if (dbl.length > 2) return false;
  const groups = s.split(':').filter((g) => g !== '');
  const last = groups[groups.length - 1];
  const v4 = last !== undefined && last.includes('.');
  if (v4 && !IP4.test(last)) return false;
  const hex = v4 ? groups.slice(0, -1) : groups;
  if (!hex.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false;
  const n = hex.length + (v4 ? 2 : 0);
  return dbl.length === 2 ? n <= 7 : n === 8;
}

export function ipFamily(address: string): Family | null {
  if (IP4.test(address)) return 'IP4';
  if (isIp6(address)) return 'IP6';
  return null;
}

export function connectionOf(version: unknown, ip: unknown): Connection {
  const address = String(ip ?? '');
  const family: Family | null = version === 4 ? 'IP4' : version === 6 ? 'IP6' : null;
  let problem: string | null = null;
  if (family === null) problem = `unknown address type IP${String(version)}`;
  else if (address.includes('/')) problem = `multicast address ${address} is not supported`;
  else if (ipFamily(address) === null) problem = `address ${address || '(empty)'} is not an IP literal`;
  else if (ipFamily(address) !== family) problem = `address ${address} is not ${family}`;
  return { family, address, problem };
}

const M_LINE = /^m=(\S+) (\d+)(?:\/(\d+))? (\S+)(?: +(.*))?$/;

/** Parses an SDP offer or answer (`what` names it in errors). */
export function parseSdp(text: unknown, what: string): Result<SdpView> {
  if (typeof text !== 'string') return fail(`${what}: SDP must be a string`);
  if (text.length > MAX_SDP_LENGTH) return fail(`${what}: SDP is longer than ${MAX_SDP_LENGTH} characters`);
  const norm = text.replace(/^\uFEFF/, '').trimStart();
  const lines = norm.split(/\r\n|\r|\n/);
  if (lines[0]?.trimEnd() !== 'v=0') return fail(`${what}: not an SDP description (it must start with v=0)`);

  const rawM: string[] = [];
  const rawCrypto: string[][] = [];
  for (const l of lines) {
    if (l.startsWith('m=')) {
      rawM.push(l.trimEnd());
      rawCrypto.push([]);
    } else if (l.startsWith('a=crypto:') && rawM.length > 0) {
      rawCrypto[rawCrypto.length - 1]?.push(l.slice('a=crypto:'.length).trim());
    }
  }

  let parsed: ReturnType<typeof parseSdpText>;
  try {
    parsed = parseSdpText(norm);
  } catch (e) {
    return fail(`${what}: unparsable SDP (${(e as Error).message})`);
  }
  if (parsed.media.length !== rawM.length) return fail(`${what}: unparsable m= lines`);
  const sessionConn = parsed.connection ? connectionOf(parsed.connection.version, parsed.connection.ip) : null;
  const sessionDir = isDirection(parsed.direction) ? parsed.direction : 'sendrecv';

  const sections: SectionView[] = [];
  for (const [index, m] of parsed.media.entries()) {
    const raw = M_LINE.exec(rawM[index] ?? '');
    if (!raw) return fail(`${what}: malformed m= line "${rawM[index]}"`);
    const rtpmap = new Map<number, RtpMap>();
    for (const r of m.rtp ?? []) {
      if (!rtpmap.has(r.payload)) {
        rtpmap.set(r.payload, {
          encoding: String(r.codec),
          rate: typeof r.rate === 'number' ? r.rate : null,
          channels: r.encoding === undefined ? null : Number(r.encoding),
        });
      }
    }
    const rtcp = m.rtcp && Number.isInteger(m.rtcp.port)
      ? { port: m.rtcp.port, connection: m.rtcp.address !== undefined ? connectionOf(m.rtcp.ipVer, m.rtcp.address) : null }
      : null;
    sections.push({
      index,
      type: raw[1] ?? '',
      port: Number(raw[2]),
      portCount: raw[3] === undefined ? null : Number(raw[3]),
      protocol: raw[4] ?? '',
      formats: (raw[5] ?? '').split(/ +/).filter((x) => x !== ''),
      connection: m.connection ? connectionOf(m.connection.version, m.connection.ip) : sessionConn,
      direction: isDirection(m.direction) ? m.direction : sessionDir,
      rtpmap,
      rtcpMux: m.rtcpMux === 'rtcp-mux',
      rtcp,
      crypto: rawCrypto[index] ?? [],
      ptime: typeof m.ptime === 'number' ? m.ptime : null,
    });
  }
  return ok({ sections });
}

/**
 * Does this SDP look like WebRTC (DTLS-SRTP / ICE)? True for a UDP/TLS/RTP/SAVP(F) m-line or
 * any a=fingerprint / a=ice-ufrag. Text-only check, no validation.
 */
export function isWebRtcSdp(sdp: string): boolean {
  if (typeof sdp !== 'string') return false;
  return /^m=\S+ \d+(?:\/\d+)? UDP\/TLS\/RTP\/SAVPF?(?: |$)/im.test(sdp) || /^a=(?:fingerprint|ice-ufrag):/m.test(sdp);
}
