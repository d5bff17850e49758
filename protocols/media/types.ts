/**
 * Shared vocabulary of the media bridge: directions, codecs, SRTP suites. Pure data; every
 * other module of protocols/media imports its names from here.
 */

/** Peer's point of view, identical to the SDP `a=` attribute the peer negotiated. */
export type Direction = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';
export const DIRECTIONS: readonly Direction[] = ['sendrecv', 'sendonly', 'recvonly', 'inactive'];

/**
 * Which sources an RTP endpoint accepts (spec: source changes must satisfy the configured peer
 * policy): `strict` the SDP address and port, `address` the SDP address on any port, `latch`
 * any (replies go where media comes from).
 */
export type PeerPolicy = 'strict' | 'address' | 'latch';
export const PEER_POLICIES: readonly PeerPolicy[] = ['strict', 'address', 'latch'];

/** Codec names as commands spell them (`codecs: ['pcmu', 'opus']`). */
export type CodecName = 'pcmu' | 'pcma' | 'g722' | 'opus';
export const CODEC_NAMES: readonly CodecName[] = ['pcmu', 'pcma', 'g722', 'opus'];

export interface CodecInfo {
  name: CodecName;
  /** rtpmap encoding name. */
  encoding: 'PCMU' | 'PCMA' | 'G722' | 'opus';
  /** Static payload type, or the one we offer for a dynamic codec. */
  defaultPt: number;
  /** RTP clock rate (G.722 is 8000 in SDP and RTP, though it samples at 16 kHz). */
  clockRate: number;
  /** Rate of the PCM the codec takes and gives. */
  sampleRate: number;
  channels: number;
}

export const CODECS: Record<CodecName, CodecInfo> = {
  pcmu: { name: 'pcmu', encoding: 'PCMU', defaultPt: 0, clockRate: 8000, sampleRate: 8000, channels: 1 },
  pcma: { name: 'pcma', encoding: 'PCMA', defaultPt: 8, clockRate: 8000, sampleRate: 8000, channels: 1 },
  g722: { name: 'g722', encoding: 'G722', defaultPt: 9, clockRate: 8000, sampleRate: 16000, channels: 1 },
  opus: { name: 'opus', encoding: 'opus', defaultPt: 111, clockRate: 48000, sampleRate: 48000, channels: 2 },
};

/** SDES suites we support (RFC 4568 names). */
export type SrtpSuite = 'AES_CM_128_HMAC_SHA1_80' | 'AES_CM_128_HMAC_SHA1_32';
export const SRTP_SUITES: readonly SrtpSuite[] = ['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32'];
/** SDES inline key: 16-byte master key followed by a 14-byte master salt. */
export const SDES_KEY_BYTES = 30;

/** Telephone-event (RFC 4733) payload type we offer at 8 kHz and 48 kHz. */
export const TELEPHONE_EVENT_PT_8K = 101;
export const TELEPHONE_EVENT_PT_48K = 110;
