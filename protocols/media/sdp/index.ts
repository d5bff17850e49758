/**
 * SDP offer/answer for plain RTP/SRTP endpoints of the media bridge (SDES keys, RFC 3264,
 * RFC 4568, RFC 8643). Pure: no I/O, no clock, randomness comes in through `newKey`.
 */
export type {
  CodecChoice, LocalMedia, MLine, Negotiated, PendingOffer, RemoteTransport, Result, RtpProfile, SdesKey, SrtpMode, TelephoneEvent,
} from './types.js';
export { answerOffer } from './answer.js';
export { acceptAnswer, createOffer } from './offer.js';
export { answerReinvite, type ReinviteChanges } from './reinvite.js';
export { createRekeyOffer } from './rekey.js';
export { checkSdes, formatSdes, parseSdesInline, sameKey } from './crypto.js';
export { isWebRtcSdp } from './parse.js';
export { intersect as intersectDirection, mirror as mirrorDirection } from './direction.js';
