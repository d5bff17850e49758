/**
 * Which m-section of an offer we take (spec rules 1, 2, 4, 6, 7, and 8's no-downgrade for
 * re-INVITEs), and the remote transport it describes.
 *
 * Decisions:
 * - an audio section with a nonzero port is "active" (rule 1) even with a=inactive: it is a live
 *   m-line, selectable, and negotiates to direction inactive;
 * - rule 4 is global: if any active audio section has a secure profile (RTP/SAVP, RTP/SAVPF) and
 *   none of those has a usable a=crypto line, the offer fails even if a plain section exists;
 * - rule 7 on RTP/AVP(F) sections (RFC 8643 opportunistic SRTP): a usable line makes the section
 *   secure; crypto lines present but none usable make that section unusable (it is not
 *   silently answered as plain RTP); other sections may still be selected;
 * - rule 2: among usable sections, the first that will run SRTP wins, else the first plain one;
 * - UDP/TLS/RTP/SAVP(F) (DTLS) and any non-RTP profile are unsupported (port 0 in the answer);
 * - legacy hold `c=IN IP4 0.0.0.0` (or `::`) is accepted: the peer then cannot receive, and
 *   the answer never sends to that address (see `holdAddress`).
 */
import type { CodecName, SrtpSuite } from '../types.js';
import { sectionCodecs, type SectionCodecs } from './codecs.js';
import { checkSdes } from './crypto.js';
import { isHoldAddress, parseNetworks, refusedAddress, type Network } from './address-policy.js';
import type { Connection, SdpView, SectionView } from './parse.js';
import { fail, ok, type LocalMedia, type RemoteTransport, type Result, type RtpProfile, type SdesKey } from './types.js';

export const SECURE_PROFILES: readonly RtpProfile[] = ['RTP/SAVP', 'RTP/SAVPF'];
export const RTP_PROFILES: readonly RtpProfile[] = ['RTP/AVP', 'RTP/AVPF', 'RTP/SAVP', 'RTP/SAVPF'];

/** any: a first offer; plain: re-INVITE of a plain endpoint; secure: re-INVITE of an SRTP endpoint using `suite`. */
export type Security = { mode: 'any' } | { mode: 'plain' } | { mode: 'secure'; suite: SrtpSuite };

export interface Selected {
  section: SectionView;
  profile: RtpProfile;
  secure: boolean;
  recvKey: SdesKey | null;
  remote: RemoteTransport;
  codecs: SectionCodecs;
  /** The peer gave 0.0.0.0 / :: (legacy hold): it receives nothing. */
  holdAddress: boolean;
}

export function asProfile(p: string): RtpProfile | null {
  const u = p.toUpperCase();
  return (RTP_PROFILES as readonly string[]).includes(u) ? (u as RtpProfile) : null;
}

export function describe(s: SectionView): string {
  return `m-section ${s.index} (${s.type} ${s.protocol})`;
}

/** `networks`: MEDIA_ALLOWED_NETWORKS (address-policy.ts), the special addresses it lets through. */
export function checkAddress(c: Connection | null, family: LocalMedia['family'], what: string, networks: readonly string[] = []): string | null {
  if (c === null) return `no c= line for the ${what}`;
  if (c.problem) return `${what}: ${c.problem}`;
  if (c.family !== family) return `${what} is ${c.family}, our media address is ${family}`;
  const refused = refusedAddress(c.address, networks.length ? allowedNetworks(networks) : []);
  return refused ? `${what}: ${refused}` : null;
}

/** The allow-list's entries, parsed (they were checked at start-up: a bad one here allows nothing). */
function allowedNetworks(list: readonly string[]): Network[] {
  const r = parseNetworks(list.join(','));
  return r.ok ? r.value : [];
}

const validPort = (p: number): boolean => Number.isInteger(p) && p > 0 && p < 65536;

export function remoteOf(s: SectionView, address: string): Result<RemoteTransport> {
  if (!validPort(s.port)) return fail(`port ${s.port} out of range`);
  let rtcpAddress = address;
  let rtcpPort = s.port + 1;
  if (s.rtcpMux) rtcpPort = s.port;
  else if (s.rtcp) {
    rtcpPort = s.rtcp.port;
    if (s.rtcp.connection) rtcpAddress = s.rtcp.connection.address;
  }
  if (!validPort(rtcpPort)) return fail(`RTCP port ${rtcpPort} out of range`);
  return ok({ address, port: s.port, rtcpAddress, rtcpPort, rtcpMux: s.rtcpMux });
}

/** First usable a=crypto line (with `suite` if given), or the reasons none is. */
export function usableCrypto(lines: readonly string[], suite?: SrtpSuite): Result<SdesKey> {
  const why: string[] = [];
  for (const l of lines) {
    const r = checkSdes(l);
    if (!r.ok) why.push(`"a=crypto:${l.slice(0, 60)}": ${r.error}`);
    else if (suite !== undefined && r.value.suite !== suite) why.push(`"a=crypto:${l.slice(0, 60)}": suite ${r.value.suite} is not the established ${suite}`);
    else return r;
  }
  return fail(lines.length === 0 ? 'no a=crypto line' : `no usable a=crypto line (${why.join('; ')})`);
}

function evaluate(s: SectionView, local: LocalMedia, allowed: readonly CodecName[], sec: Security): Result<Selected> {
  if (s.portCount !== null && s.portCount !== 1) return fail(`port count ${s.portCount} is not supported`);
  const profile = asProfile(s.protocol);
  if (profile === null) {
    const dtls = /^UDP\/TLS\/RTP\/SAVPF?$/i.test(s.protocol) ? ' (DTLS-SRTP/WebRTC is not an RTP endpoint profile)' : '';
    return fail(`rule 6: unsupported transport profile ${s.protocol}${dtls}`);
  }
  const addrErr = checkAddress(s.connection, local.family, 'media address', local.allowedNetworks);
  if (addrErr) return fail(`rule 6: ${addrErr}`);
  if (s.rtcp?.connection) {
    const e = checkAddress(s.rtcp.connection, local.family, 'a=rtcp address', local.allowedNetworks);
    if (e) return fail(`rule 6: ${e}`);
  }
  const address = s.connection?.address ?? '';
  const remote = remoteOf(s, address);
  if (!remote.ok) return remote;
  const codecs = sectionCodecs(s, allowed);
  if (codecs.codecs.length === 0) return fail(`rule 6: no supported codec among formats ${s.formats.join(' ') || '(none)'} (we take ${allowed.join(', ')})`);

  const secureProfile = SECURE_PROFILES.includes(profile);
  let recvKey: SdesKey | null = null;
  if (sec.mode === 'plain') {
    if (secureProfile) return fail(`rule 8: ${profile} on a plain RTP endpoint (a re-INVITE does not start outbound SRTP)`);
    // RFC 8643: an opportunistic a=crypto on RTP/AVP may be answered with plain RTP.
  } else if (secureProfile || s.crypto.length > 0) {
    const k = usableCrypto(s.crypto, sec.mode === 'secure' ? sec.suite : undefined);
    if (!k.ok) return fail(`rule ${secureProfile ? 4 : 7}: ${k.error}`);
    recvKey = k.value;
  } else if (sec.mode === 'secure') {
    return fail('rule 8: plain RTP offered to an SRTP endpoint (no downgrade)');
  }
  const holdAddress = isHoldAddress(address);
  return ok({ section: s, profile, secure: recvKey !== null, recvKey, remote: remote.value, codecs, holdAddress });
}

/** Picks the m-section to answer, or says why none fits. */
export function selectSection(view: SdpView, local: LocalMedia, allowed: readonly CodecName[], sec: Security, what: string): Result<Selected> {
  const audio = view.sections.filter((s) => s.type === 'audio');
  if (audio.length === 0) return fail(`${what}: no m=audio section`);
  const active = audio.filter((s) => s.port !== 0);
  if (active.length === 0) return fail(`${what}: rule 1: no active audio section (every m=audio has port 0)`);

  const secure = active.filter((s) => SECURE_PROFILES.includes(asProfile(s.protocol) as RtpProfile));
  if (secure.length > 0 && secure.every((s) => !usableCrypto(s.crypto).ok)) {
    const why = secure.map((s) => `${describe(s)}: ${(usableCrypto(s.crypto) as { error: string }).error}`);
    return fail(`${what}: rule 4: secure audio offered but no section has usable SDES key material; no fallback to plain RTP (${why.join('; ')})`);
  }

  const reasons: string[] = [];
  let plain: Selected | null = null;
  for (const s of active) {
    const r = evaluate(s, local, allowed, sec);
    if (!r.ok) reasons.push(`${describe(s)}: ${r.error}`);
    else if (r.value.secure) return r;
    else plain ??= r.value;
  }
  if (plain) return ok(plain);
  return fail(`${what}: no usable audio section: ${reasons.join('; ')}`);
}
