/**
 * answerOffer: answer a peer's offer (endpoint.rtp.create_from_offer).
 *
 * The answer keeps every offered m-section in order; the selected audio section gets our port,
 * the codecs we accept in the offerer's order with the offerer's PTs, the telephone-event PT
 * whose clock rate equals the send codec's (if offered), a fresh key of ours with the tag and
 * suite of the accepted a=crypto line, and the mirror of the negotiated direction; every other
 * section gets port 0 with its format list intact. Nothing is committed on failure: the
 * functions are pure and the caller keeps its state.
 */
import type { CodecName, Direction } from '../types.js';
import { checkCodecList, telephoneEventFor } from './codecs.js';
import { freshKey } from './crypto.js';
import { checkDirection, intersect, mirror } from './direction.js';
import { parseSdp, type SdpView } from './parse.js';
import { selectSection, type Selected } from './select.js';
import { ok, type LocalMedia, type MLine, type Negotiated, type Result, type SdesKey } from './types.js';
import { checkLocal, PTIME, writeSdp, type OutSection } from './write.js';

/** Negotiated direction: what the peer offered ∩ what we were asked for (a 0.0.0.0 peer cannot receive). */
export function negotiateDirection(sel: Selected, requested: Direction): Direction {
  const d = intersect(sel.section.direction, requested);
  return sel.holdAddress ? intersect(d, 'sendonly') : d;
}

/** Codec part of a negotiation answered from `sel` (offerer's PTs both ways). */
export function codecState(sel: Selected): Pick<Negotiated, 'sendCodec' | 'codecs' | 'telephoneEvent' | 'recvTelephoneEventPt'> {
  const codecs = sel.codecs.codecs;
  const sendCodec = codecs[0]!; // selectSection guarantees one
  const te = telephoneEventFor(sel.codecs.telephoneEvents, sendCodec.clockRate);
  return { sendCodec, codecs: [...codecs], telephoneEvent: te, recvTelephoneEventPt: te?.pt ?? null };
}

/** Writes our answer to `view` with `sel` accepted; the telephone-event line is the one at `teClockRate`. */
export function writeAnswer(view: SdpView, sel: Selected, local: LocalMedia, peerDirection: Direction, sendKey: SdesKey | null, teClockRate: number): string {
  const te = telephoneEventFor(sel.codecs.telephoneEvents, teClockRate);
  const sections: OutSection[] = view.sections.map((s) => (s !== sel.section
    ? { kind: 'rejected', offered: s }
    : {
      kind: 'audio',
      port: local.port,
      profile: s.protocol,
      codecs: sel.codecs.codecs,
      telephoneEvents: te ? [te] : [],
      crypto: sendKey,
      attribute: mirror(peerDirection),
      rtcpMux: s.rtcpMux,
      rtcpPort: s.rtcpMux ? null : local.rtcpPort,
    }));
  return writeSdp(local, sections);
}

export function mLinesOf(view: SdpView): MLine[] {
  return view.sections.map((s) => ({ type: s.type, protocol: s.protocol, formats: [...s.formats] }));
}

export function answerOffer(
  offerSdp: string,
  o: { local: LocalMedia; direction: Direction; newKey: () => Uint8Array; codecs?: readonly CodecName[] },
): Result<{ sdp: string; negotiated: Negotiated }> {
  const local = checkLocal(o.local);
  if (!local.ok) return local;
  const direction = checkDirection(o.direction);
  if (!direction.ok) return direction;
  const allowed = checkCodecList(o.codecs);
  if (!allowed.ok) return allowed;
  const view = parseSdp(offerSdp, 'offer');
  if (!view.ok) return view;
  const sel = selectSection(view.value, o.local, allowed.value, { mode: 'any' }, 'offer');
  if (!sel.ok) return sel;
  const s = sel.value;

  let sendKey: SdesKey | null = null;
  if (s.recvKey) {
    const k = freshKey(o.newKey);
    if (!k.ok) return k;
    sendKey = { tag: s.recvKey.tag, suite: s.recvKey.suite, keySalt: k.value };
  }
  const peerDirection = negotiateDirection(s, direction.value);
  const negotiated: Negotiated = {
    mid: s.section.index,
    profile: s.profile,
    secure: s.secure,
    remote: s.remote,
    ...codecState(s),
    peerDirection,
    recvKey: s.recvKey,
    sendKey,
    ptime: PTIME,
    mLines: mLinesOf(view.value),
  };
  return ok({ sdp: writeAnswer(view.value, s, o.local, peerDirection, sendKey, negotiated.sendCodec.clockRate), negotiated });
}
