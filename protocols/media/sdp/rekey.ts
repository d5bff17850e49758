/**
 * createRekeyOffer: endpoint.rtp.srtp_rekey. A new offer from us carrying a fresh send key of
 * the established suite and tag, the established codecs with their receive PTs, the
 * established profile, the session's other m-lines at port 0, and rtcp-mux if it is in use.
 * Only for an SRTP endpoint. acceptAnswer(pending, answer) then gives the new Negotiated: the
 * answer must stay secure (mode `required`, rule 8) and codec state is kept.
 */
import type { Direction } from '../types.js';
import { freshKey } from './crypto.js';
import { checkDirection } from './direction.js';
import { buildOffer } from './offer.js';
import { fail, ok, type LocalMedia, type Negotiated, type PendingOffer, type Result, type TelephoneEvent } from './types.js';
import { checkLocal } from './write.js';

export function createRekeyOffer(current: Negotiated, o: { local: LocalMedia; direction: Direction; newKey: () => Uint8Array }): Result<PendingOffer> {
  if (!current.secure || current.sendKey === null) return fail('srtp_rekey: the endpoint does not use SRTP (nothing to rekey)');
  const local = checkLocal(o.local);
  if (!local.ok) return local;
  const direction = checkDirection(o.direction);
  if (!direction.ok) return direction;
  const k = freshKey(o.newKey);
  if (!k.ok) return k;
  const te: TelephoneEvent[] = current.telephoneEvent && current.recvTelephoneEventPt !== null
    ? [{ pt: current.recvTelephoneEventPt, clockRate: current.telephoneEvent.clockRate }]
    : [];
  return ok(buildOffer({
    local: o.local,
    direction: direction.value,
    srtp: 'required',
    profile: current.profile,
    codecs: current.codecs,
    telephoneEvents: te,
    sendKey: { tag: current.sendKey.tag, suite: current.sendKey.suite, keySalt: k.value },
    rtcpMux: current.remote.rtcpMux,
    established: current,
    others: { mLines: current.mLines, mid: current.mid },
  }));
}
