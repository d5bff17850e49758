/**
 * answerReinvite: a new offer from the peer on an established endpoint (endpoint.rtp.reinvite,
 * hold/unhold). Updates the remote transport, the receive key, the direction and the m-line
 * layout; keeps codecs, sendCodec, telephone-event PTs and our send key (outbound state).
 *
 * Decisions:
 * - an SRTP endpoint takes only a secure section whose a=crypto suite is the established one
 *   (the answer re-announces our unchanged send key, with the peer's tag, and RFC 4568 wants
 *   the answer's suite to be the offer line's); a plain offer is a downgrade (rule 8);
 * - a plain endpoint refuses RTP/SAVP(F) (a re-INVITE does not create outbound SRTP state) and
 *   answers an RTP/AVP section's opportunistic a=crypto with plain RTP (RFC 8643 allows it);
 * - the answer's m-line lists the codecs of the *new* offer that are among the established ones,
 *   in its order with its PTs (an answer must use the offer's PTs), even though our codec state
 *   does not change; an offer with none of the established codecs is refused (rule 6); the
 *   telephone-event line is the one at the established send codec's clock rate;
 * - negotiated.sendKey is `current.sendKey` unchanged; only the answer's a=crypto line carries
 *   the peer's tag;
 * - changes.resetReceiveState says the receive replay/sequence state starts fresh. For SRTP
 *   that happens only with a new receive key (rule 9: same-key renegotiation keeps replay
 *   windows and ROCs; a peer restarting its SSRC and index must send a fresh key), so it equals
 *   recvKeyChanged on a secure endpoint and is false for a same-key resume. For plain RTP it is
 *   true when the peer resumes sending (its direction gains "send") or the remote transport
 *   changed. The remote SSRC is relearned after every re-INVITE regardless.
 */
import type { Direction } from '../types.js';
import { mLinesOf, negotiateDirection, writeAnswer } from './answer.js';
import { sameKey } from './crypto.js';
import { checkDirection, peerSends } from './direction.js';
import { parseSdp } from './parse.js';
import { selectSection, type Security } from './select.js';
import { fail, ok, type LocalMedia, type Negotiated, type RemoteTransport, type Result, type SdesKey } from './types.js';
import { checkLocal } from './write.js';

export interface ReinviteChanges {
  remote: boolean;
  recvKeyChanged: boolean;
  resetReceiveState: boolean;
}

function sameRemote(a: RemoteTransport, b: RemoteTransport): boolean {
  return a.address === b.address && a.port === b.port && a.rtcpAddress === b.rtcpAddress && a.rtcpPort === b.rtcpPort && a.rtcpMux === b.rtcpMux;
}

export function answerReinvite(
  current: Negotiated,
  offerSdp: string,
  o: { local: LocalMedia; direction: Direction; newKey: () => Uint8Array },
): Result<{ sdp: string; negotiated: Negotiated; changes: ReinviteChanges }> {
  const local = checkLocal(o.local);
  if (!local.ok) return local;
  const direction = checkDirection(o.direction);
  if (!direction.ok) return direction;
  if (current.secure && current.sendKey === null) return fail('reinvite: established SRTP negotiation has no send key');
  const view = parseSdp(offerSdp, 'reinvite offer');
  if (!view.ok) return view;
  const sec: Security = current.secure && current.sendKey ? { mode: 'secure', suite: current.sendKey.suite } : { mode: 'plain' };
  const agreed = [...new Set(current.codecs.map((c) => c.name))];
  const sel = selectSection(view.value, o.local, agreed, sec, 'reinvite offer');
  if (!sel.ok) return sel;
  const s = sel.value;
  if (current.secure && !s.secure) return fail('reinvite offer: rule 8: an SRTP endpoint cannot be downgraded to plain RTP');

  // Outbound key unchanged; the answer carries it with the tag of the line we accepted.
  const sendKey: SdesKey | null = current.sendKey && s.recvKey ? { ...current.sendKey, tag: s.recvKey.tag } : null;
  const peerDirection = negotiateDirection(s, direction.value);
  const recvKeyChanged = !sameKey(current.recvKey, s.recvKey);
  const remoteChanged = !sameRemote(current.remote, s.remote);
  const resumed = !peerSends(current.peerDirection) && peerSends(peerDirection);
  const negotiated: Negotiated = {
    ...current,
    mid: s.section.index,
    profile: s.profile,
    remote: s.remote,
    peerDirection,
    recvKey: s.recvKey,
    mLines: mLinesOf(view.value),
  };
  return ok({
    // The answer's codec list follows the new offer (its PTs); our codec state (in `current`) is kept.
    sdp: writeAnswer(view.value, s, o.local, peerDirection, sendKey, current.sendCodec.clockRate),
    negotiated,
    changes: { remote: remoteChanged, recvKeyChanged, resetReceiveState: current.secure ? recvKeyChanged : resumed || remoteChanged },
  });
}
