/**
 * Classic libpcap files of recorded media: the writer's bytes and a reader for them. A record
 * holds one datagram as the bridge received it (SRTP already decrypted), framed as a raw IP
 * packet (LINKTYPE_RAW, 101: an IPv4 or IPv6 header, a UDP header, the payload; no Ethernet
 * header) from the peer's address and port to the endpoint's local address and port, so
 * Wireshark and tshark decode it as UDP (and as RTP with `-d udp.port==N,rtp` or heuristics).
 * Timestamps are epoch milliseconds (the clock of `removed_at_epoch_ms`) stored as seconds and
 * microseconds. Pure: no I/O.
 */

export const PCAP_MAGIC = 0xa1b2c3d4;
export const LINKTYPE_RAW = 101;
export const PCAP_SNAPLEN = 65535;
export const PCAP_HEADER_BYTES = 24;
export const PCAP_RECORD_HEADER_BYTES = 16;

/** The 24-byte global header (little-endian, version 2.4, microsecond timestamps). */
export function pcapFileHeader(linktype = LINKTYPE_RAW): Buffer {
  const b = Buffer.alloc(PCAP_HEADER_BYTES);
  b.writeUInt32LE(PCAP_MAGIC, 0);
  b.writeUInt16LE(2, 4);
  b.writeUInt16LE(4, 6);
  b.writeInt32LE(0, 8); // thiszone
  b.writeUInt32LE(0, 12); // sigfigs
  b.writeUInt32LE(PCAP_SNAPLEN, 16);
  b.writeUInt32LE(linktype, 20);
  return b;
}

export interface UdpTuple {
  srcAddress: string;
  srcPort: number;
  dstAddress: string;
  dstPort: number;
}

/** One pcap record: its 16-byte header, then the IP/UDP frame of `payload`. */
export function pcapRecord(epochMs: number, tuple: UdpTuple, payload: Uint8Array): Buffer {
  const frame = ipUdpFrame(tuple, payload);
  const b = Buffer.alloc(PCAP_RECORD_HEADER_BYTES + frame.length);
  const whole = Math.floor(epochMs);
  b.writeUInt32LE(Math.floor(whole / 1000), 0);
  b.writeUInt32LE((whole % 1000) * 1000 + Math.floor((epochMs - whole) * 1000), 4);
  b.writeUInt32LE(frame.length, 8);
  b.writeUInt32LE(frame.length, 12);
  frame.copy(b, PCAP_RECORD_HEADER_BYTES);
  return b;
}

// ---- addresses -----------------------------------------------------------------------------

/** 4 or 16 bytes of a textual address (IPv4-mapped IPv6 `::ffff:a.b.c.d` counts as IPv4); null if it is neither. */
export function addressBytes(address: string): Uint8Array | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) address = mapped[1]!;
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (v4) {
    const parts = v4.slice(1).map(Number);
    return parts.every((p) => p <= 255) ? Uint8Array.from(parts) : null;
  }
  const bare = address.split('%')[0]!;
  if (!/^[0-9a-f:]+$/i.test(bare) || bare.split('::').length > 2) return null;
  const [head, tail] = bare.includes('::') ? bare.split('::') : [bare, undefined];
  const groups = (s: string | undefined) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = groups(tail);
  const fill = 8 - h.length - t.length;
  if ((tail === undefined && fill !== 0) || (tail !== undefined && fill < 1)) return null;
  const all = [...h, ...Array<string>(tail === undefined ? 0 : fill).fill('0'), ...t];
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const g = all[i]!;
    if (!/^[0-9a-f]{1,4}$/i.test(g)) return null;
    const v = parseInt(g, 16);
    out[2 * i] = v >> 8;
    out[2 * i + 1] = v & 0xff;
  }
  return out;
}

export function addressText(bytes: Uint8Array): string {
  if (bytes.length === 4) return [...bytes].join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return groups.join(':');
}

// ---- IP/UDP framing ------------------------------------------------------------------------

function sum16(b: Uint8Array, start: number, end: number, acc = 0): number {
  for (let i = start; i < end; i += 2) acc += (b[i]! << 8) | (i + 1 < end ? b[i + 1]! : 0);
  return acc;
}
const fold = (acc: number) => {
  while (acc > 0xffff) acc = (acc & 0xffff) + Math.floor(acc / 0x10000);
  return ~acc & 0xffff;
};

/**
 * An IPv4 (20-byte header) or IPv6 (40-byte header) packet carrying one UDP datagram. The
 * family is the source's; a destination of the other family (a dual-stack socket) is written
 * as that family's unspecified address. An unparsable address is written as unspecified too.
 */
export function ipUdpFrame(tuple: UdpTuple, payload: Uint8Array): Buffer {
  let src = addressBytes(tuple.srcAddress) ?? new Uint8Array(4);
  let dst = addressBytes(tuple.dstAddress) ?? new Uint8Array(src.length);
  if (dst.length !== src.length) dst = new Uint8Array(src.length);
  const v6 = src.length === 16;
  const ipLen = v6 ? 40 : 20;
  const udpLen = 8 + payload.length;
  const b = Buffer.alloc(ipLen + udpLen);
  if (v6) {
    b[0] = 0x60;
    b.writeUInt16BE(udpLen, 4);
    b[6] = 17; // next header: UDP
    b[7] = 64;
    b.set(src, 8);
    b.set(dst, 24);
  } else {
    b[0] = 0x45;
    b.writeUInt16BE(ipLen + udpLen, 2);
    b.writeUInt16BE(0x4000, 6); // don't fragment
    b[8] = 64;
    b[9] = 17;
    b.set(src, 12);
    b.set(dst, 16);
    b.writeUInt16BE(fold(sum16(b, 0, 20)), 10);
  }
  b.writeUInt16BE(tuple.srcPort, ipLen);
  b.writeUInt16BE(tuple.dstPort, ipLen + 2);
  b.writeUInt16BE(udpLen, ipLen + 4);
  b.set(payload, ipLen + 8);
  // UDP checksum over the pseudo-header (source, destination, protocol, UDP length) and the datagram.
  let acc = sum16(src, 0, src.length) + sum16(dst, 0, dst.length) + 17 + udpLen;
  acc = sum16(b, ipLen, b.length, acc);
  const ck = fold(acc);
  b.writeUInt16BE(ck === 0 ? 0xffff : ck, ipLen + 6);
  return b;
}

export interface PcapPacket extends UdpTuple {
  /** Epoch time of the record in milliseconds (microsecond precision). */
  epochMs: number;
  payload: Buffer;
}

export type PcapRead = { ok: true; linktype: number; packets: PcapPacket[]; truncated: boolean } | { ok: false; error: string };

/**
 * Read a classic pcap file of raw IP/UDP records (ours). A file cut short mid-record (a disk
 * that filled up) reads as its whole records with `truncated`. Records that are not IP/UDP are
 * an error naming the record.
 */
export function readPcap(file: Uint8Array): PcapRead {
  const b = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  if (b.length < PCAP_HEADER_BYTES) return { ok: false, error: `${b.length} bytes is shorter than a pcap header (24)` };
  if (b.readUInt32LE(0) !== PCAP_MAGIC) return { ok: false, error: `magic 0x${b.readUInt32LE(0).toString(16)} is not a little-endian microsecond pcap (0xa1b2c3d4)` };
  const linktype = b.readUInt32LE(20);
  if (linktype !== LINKTYPE_RAW) return { ok: false, error: `linktype ${linktype} is not LINKTYPE_RAW (101)` };
  const packets: PcapPacket[] = [];
  let at = PCAP_HEADER_BYTES;
  while (at + PCAP_RECORD_HEADER_BYTES <= b.length) {
    const sec = b.readUInt32LE(at);
    const usec = b.readUInt32LE(at + 4);
    const incl = b.readUInt32LE(at + 8);
    if (at + PCAP_RECORD_HEADER_BYTES + incl > b.length) break;
    const frame = b.subarray(at + PCAP_RECORD_HEADER_BYTES, at + PCAP_RECORD_HEADER_BYTES + incl);
    const udp = parseIpUdp(frame);
    if (!udp) return { ok: false, error: `record ${packets.length} (at byte ${at}) is not an IPv4 or IPv6 UDP packet` };
    packets.push({ epochMs: sec * 1000 + usec / 1000, ...udp });
    at += PCAP_RECORD_HEADER_BYTES + incl;
  }
  return { ok: true, linktype, packets, truncated: at !== b.length };
}

/** The tuple and payload of a raw IPv4/IPv6 UDP packet; null when it is not one. */
export function parseIpUdp(frame: Buffer): (UdpTuple & { payload: Buffer }) | null {
  const version = frame.length > 0 ? frame[0]! >> 4 : 0;
  let ipLen: number;
  let src: Uint8Array;
  let dst: Uint8Array;
  if (version === 4 && frame.length >= 20 && frame[9] === 17) {
    ipLen = (frame[0]! & 0x0f) * 4;
    src = frame.subarray(12, 16);
    dst = frame.subarray(16, 20);
  } else if (version === 6 && frame.length >= 40 && frame[6] === 17) {
    ipLen = 40;
    src = frame.subarray(8, 24);
    dst = frame.subarray(24, 40);
  } else return null;
  if (frame.length < ipLen + 8) return null;
  const udpLen = frame.readUInt16BE(ipLen + 4);
  if (udpLen < 8 || ipLen + udpLen > frame.length) return null;
  return {
    srcAddress: addressText(src),
    srcPort: frame.readUInt16BE(ipLen),
    dstAddress: addressText(dst),
    dstPort: frame.readUInt16BE(ipLen + 2),
    payload: frame.subarray(ipLen + 8, ipLen + udpLen),
  };
}
