/**
 * createOffer / acceptAnswer: offers the bridge originates (endpoint.rtp.create_offer,
 * accept_answer; also the answer to an SDES rekey offer).
 *
 * Our offer is a single audio section: codecs in the requested order with their default PTs,
 * telephone-event 101 (8 kHz) and 110 (48 kHz, with opus), `a=ptime:20`, `a=rtcp-mux` always
 * (plus `a=rtcp:<rtcpPort>` as the non-mux fallback when rtcpPort ≠ port), the mirror of the
 * requested direction, and with srtp / srtpOptional one `a=crypto:1 AES_CM_128_HMAC_SHA1_80`
 * line on RTP/SAVP / RTP/AVP. (A rekey offer repeats the session's other m-lines at port 0.)
 *
 * acceptAnswer decisions: the answer has the offer's m-lines and exactly one active audio
 * section, ours (rule 5); its profile must be ours up to the AVPF feedback suffix; a `required`
 * offer needs an answer with exactly one usable a=crypto echoing our tag and suite, an
 * `optional` one may get that or none, an `off` one must get none; the send codec is the first
 * in the answer's m-line that we offered, sent with the answer's PT; the receive PT map is our
 * offer's. For a rekey offer (`established` set) codec state is kept and the answer must still
 * list our send codec.
 */
import type { CodecName, Direction } from '../types.js';
import { checkCodecList, identify, offerPayloads, telephoneEventFor } from './codecs.js';
import { checkSdes, freshKey } from './crypto.js';
import { checkDirection, intersect, mirror } from './direction.js';
import { parseSdp } from './parse.js';
import { asProfile, checkAddress, remoteOf, SECURE_PROFILES } from './select.js';
import {
  fail, ok, type CodecChoice, type LocalMedia, type MLine, type Negotiated, type PendingOffer, type Result,
  type RtpProfile, type SdesKey, type SrtpMode, type TelephoneEvent,
} from './types.js';
import { checkLocal, PTIME, writeSdp, type OutSection } from './write.js';

/** Writes an offer (our audio at `mid`, other m-lines at port 0) and the pending state acceptAnswer needs. */
export function buildOffer(p: {
  local: LocalMedia; direction: Direction; srtp: SrtpMode; profile: RtpProfile; codecs: CodecChoice[];
  telephoneEvents: TelephoneEvent[]; sendKey: SdesKey | null; rtcpMux: boolean; established: Negotiated | null;
  others?: { mLines: MLine[]; mid: number };
}): PendingOffer {
  const ours: OutSection = {
    kind: 'audio',
    port: p.local.port,
    profile: p.profile,
    codecs: p.codecs,
    telephoneEvents: p.telephoneEvents,
    crypto: p.sendKey,
    attribute: mirror(p.direction),
    rtcpMux: p.rtcpMux,
    rtcpPort: p.rtcpMux && p.local.rtcpPort === p.local.port ? null : p.local.rtcpPort,
  };
  const mid = p.others?.mid ?? 0;
  const ourLine: MLine = { type: 'audio', protocol: p.profile, formats: [...p.codecs, ...p.telephoneEvents].map((c) => String(c.pt)) };
  const mLines = p.others ? p.others.mLines.map((m, i) => (i === mid ? ourLine : m)) : [ourLine];
  const sdp = writeSdp(p.local, mLines.map((m, i): OutSection => (i === mid ? ours : { kind: 'rejected', offered: m })));
  return {
    sdp,
    srtp: p.srtp,
    codecs: p.codecs.map((c) => c.name),
    sendKey: p.sendKey,
    direction: p.direction,
    sessionVersion: p.local.sessionVersion,
    profile: p.profile,
    family: p.local.family,
    allowedNetworks: p.local.allowedNetworks,
    offered: p.codecs,
    offeredTelephoneEvents: p.telephoneEvents,
    mLines,
    mid,
    established: p.established,
  };
}

export function createOffer(o: {
  local: LocalMedia; direction: Direction; srtp: boolean; srtpOptional: boolean; codecs?: readonly CodecName[]; newKey: () => Uint8Array;
}): Result<PendingOffer> {
  if (o.srtp && o.srtpOptional) return fail('srtp and srtp_optional are mutually exclusive');
  const local = checkLocal(o.local);
  if (!local.ok) return local;
  const direction = checkDirection(o.direction);
  if (!direction.ok) return direction;
  const codecs = checkCodecList(o.codecs);
  if (!codecs.ok) return codecs;
  const srtp: SrtpMode = o.srtp ? 'required' : o.srtpOptional ? 'optional' : 'off';
  let sendKey: SdesKey | null = null;
  if (srtp !== 'off') {
    const k = freshKey(o.newKey);
    if (!k.ok) return k;
    sendKey = { tag: 1, suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: k.value };
  }
  const payloads = offerPayloads(codecs.value);
  return ok(buildOffer({
    local: o.local, direction: direction.value, srtp, profile: srtp === 'required' ? 'RTP/SAVP' : 'RTP/AVP',
    codecs: payloads.codecs, telephoneEvents: payloads.telephoneEvents, sendKey, rtcpMux: true, established: null,
  }));
}

const baseProfile = (p: string): string => p.toUpperCase().replace(/F$/, '');

/** Applies the peer's answer to our pending offer. Rule 5 applies. Pure: `pending` is not changed. */
export function acceptAnswer(pending: PendingOffer, answerSdp: string): Result<Negotiated> {
  const view = parseSdp(answerSdp, 'answer');
  if (!view.ok) return view;
  const sections = view.value.sections;
  const activeAudio = sections.filter((s) => s.type === 'audio' && s.port !== 0);
  if (activeAudio.length !== 1) {
    return fail(`answer: rule 5: an answer to our single-section offer must have exactly one active audio section, it has ${activeAudio.length}`);
  }
  if (sections.length !== pending.mLines.length) return fail(`answer: rule 3: it has ${sections.length} m-sections, our offer had ${pending.mLines.length}`);
  const s = activeAudio[0]!;
  if (s.index !== pending.mid) return fail(`answer: rule 3: the active audio section is m-section ${s.index}, we offered audio in m-section ${pending.mid}`);
  const name = `answer: m-section ${s.index} (${s.protocol})`;

  const profile = asProfile(s.protocol);
  if (profile === null || baseProfile(profile) !== baseProfile(pending.profile)) {
    return fail(`${name}: rule 6: profile ${s.protocol} does not match our offered ${pending.profile}`);
  }
  if (s.portCount !== null && s.portCount !== 1) return fail(`${name}: port count ${s.portCount} is not supported`);
  const addrErr = checkAddress(s.connection, pending.family, 'media address', pending.allowedNetworks)
    ?? (s.rtcp?.connection ? checkAddress(s.rtcp.connection, pending.family, 'a=rtcp address', pending.allowedNetworks) : null);
  if (addrErr) return fail(`${name}: rule 6: ${addrErr}`);
  const remote = remoteOf(s, s.connection!.address);
  if (!remote.ok) return fail(`${name}: ${remote.error}`);

  // Keys (rules 7 and 8).
  let recvKey: SdesKey | null = null;
  if (s.crypto.length > 0) {
    const mine = pending.sendKey;
    if (pending.srtp === 'off' || mine === null) return fail(`${name}: a=crypto in the answer to our plain RTP offer`);
    if (s.crypto.length > 1) return fail(`${name}: an answer must carry exactly one a=crypto line, it has ${s.crypto.length}`);
    const k = checkSdes(s.crypto[0]!);
    if (!k.ok) return fail(`${name}: rule 7: ${k.error}`);
    if (k.value.tag !== mine.tag) return fail(`${name}: a=crypto tag ${k.value.tag} is not the tag we offered (${mine.tag})`);
    if (k.value.suite !== mine.suite) return fail(`${name}: a=crypto suite ${k.value.suite} is not the suite we offered with tag ${mine.tag} (${mine.suite})`);
    recvKey = k.value;
  } else if (SECURE_PROFILES.includes(profile)) {
    return fail(`${name}: rule 7: secure profile without a=crypto`);
  } else if (pending.srtp === 'required') {
    return fail(`${name}: plain RTP answer to an offer that requires SRTP (rule 8: no downgrade)`);
  }

  // Codecs: first in the answer's order that we offered; we send with the answer's PT.
  let send: CodecChoice | null = null;
  const answered = new Set<CodecName>();
  const answerTe: TelephoneEvent[] = [];
  for (const f of s.formats) {
    if (!/^\d{1,3}$/.test(f)) continue;
    const id = identify(Number(f), s.rtpmap.get(Number(f)));
    if (id?.kind === 'te') answerTe.push(id.te);
    if (id?.kind !== 'codec' || !pending.codecs.includes(id.choice.name)) continue;
    answered.add(id.choice.name);
    send ??= id.choice;
  }
  if (send === null) return fail(`${name}: rule 6: the answer chose no codec we offered (formats ${s.formats.join(' ') || 'none'}; we offered ${pending.codecs.join(', ')})`);
  const teSend = telephoneEventFor(answerTe, send.clockRate);
  const teOffered = telephoneEventFor(pending.offeredTelephoneEvents, send.clockRate);
  const te = teSend && teOffered ? { send: teSend, recvPt: teOffered.pt } : null;

  let codecState: Pick<Negotiated, 'sendCodec' | 'codecs' | 'telephoneEvent' | 'recvTelephoneEventPt'> = {
    sendCodec: send,
    codecs: pending.offered.filter((c) => answered.has(c.name)),
    telephoneEvent: te?.send ?? null,
    recvTelephoneEventPt: te?.recvPt ?? null,
  };
  const est = pending.established;
  if (est) {
    if (!answered.has(est.sendCodec.name)) return fail(`${name}: the rekey answer drops our send codec ${est.sendCodec.name}`);
    codecState = { sendCodec: est.sendCodec, codecs: est.codecs, telephoneEvent: est.telephoneEvent, recvTelephoneEventPt: est.recvTelephoneEventPt };
  }
  return ok({
    mid: s.index,
    profile,
    secure: recvKey !== null,
    remote: remote.value,
    ...codecState,
    peerDirection: intersect(s.direction, pending.direction),
    recvKey,
    sendKey: recvKey !== null ? pending.sendKey : null,
    ptime: PTIME,
    mLines: pending.mLines,
  });
}
