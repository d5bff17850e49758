/**
 * The generator's SDP: one PCMU audio section on a leg's local port, optionally RTP/SAVP with
 * an SDES AES_CM_128_HMAC_SHA1_80 key (rtp-load.mjs's offer, unchanged), and the few fields
 * it reads back from a relay's SDP (media port, connection address, first a=crypto key).
 */
export const HOST = '127.0.0.1';

export function legSdp(port: number, srtpKeyB64: string | null): string {
  const proto = srtpKeyB64 ? 'RTP/SAVP' : 'RTP/AVP';
  return [
    'v=0',
    `o=- ${port} 1 IN IP4 ${HOST}`,
    's=-',
    `c=IN IP4 ${HOST}`,
    't=0 0',
    `m=audio ${port} ${proto} 0`,
    'a=rtpmap:0 PCMU/8000',
    'a=ptime:20',
    'a=sendrecv',
    ...(srtpKeyB64 ? [`a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${srtpKeyB64}`] : []),
    '',
  ].join('\r\n');
}

export interface RelayMedia {
  port: number;
  addr: string | undefined;
  crypto: string | undefined;
}

export function parseRelaySdp(s: string): RelayMedia {
  const port = Number(/^m=audio (\d+) /m.exec(s)?.[1]);
  const addr = /^c=IN IP4 (\S+)/m.exec(s)?.[1];
  const crypto = /^a=crypto:\d+ AES_CM_128_HMAC_SHA1_80 inline:([A-Za-z0-9+/=]+)/m.exec(s)?.[1];
  return { port, addr, crypto };
}
