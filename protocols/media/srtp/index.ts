/**
 * SRTP/SRTCP (RFC 3711) for the media bridge: AES_CM_128_HMAC_SHA1_80 and _32 with SDES keys.
 * Public API; see context.ts (contexts), receiver.ts (rekey transition), replay.ts, kdf.ts, sdes.ts.
 */
export {
  SrtpSendContext,
  SrtpReceiveContext,
  srtpTagLength,
  SRTCP_TAG_BYTES,
  DEFAULT_MAX_SSRCS,
  DEFAULT_REPLAY_WINDOW,
  type SrtpFailure,
  type SrtpSendState,
  type SrtpReceiveState,
  type SrtpReceiveOptions,
} from './context.js';
export { SrtpReceiver, DEFAULT_REKEY_GRACE_MS, type SrtpReceiverState } from './receiver.js';
export { decodeSdesKey, encodeSdesKey } from './sdes.js';
