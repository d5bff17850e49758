/**
 * An RTP endpoint's socket pair owned by the native packet path (fastpath.ts), behind the face
 * of socket-pair.ts; its native handles are how fast-rules.ts sets the forwarding rule of the
 * RTP socket. Received packets that the addon does not forward
 * arrive through `onPacket` (batched per loop turn by the addon); sends are queued natively
 * and leave with sendmmsg once per loop turn.
 */
import { setReceiver, type NativeFastPath } from './fastpath.js';
import { candidatePorts, type PacketHandler, type SocketPair } from './socket-pair.js';

export class NativeSocketPair implements SocketPair {
  onPacket: PacketHandler = () => undefined;
  closed = false;
  sent = 0;
  private sendFailures = 0;
  /** Where the RTP socket is connected, or null. */
  private peer: { address: string; port: number } | null = null;

  private constructor(
    readonly native: { addon: NativeFastPath; rtp: number; rtcp: number },
    readonly port: number,
  ) {
    setReceiver(native.rtp, (data, address, port) => this.onPacket(data, address, port, false));
    setReceiver(native.rtcp, (data, address, port) => this.onPacket(data, address, port, true));
  }

  static open(addon: NativeFastPath, bindAddress: string, family: 'IP4' | 'IP6', min: number, max: number): NativeSocketPair {
    const fam = family === 'IP6' ? 6 : 4;
    let last = 0;
    for (const port of candidatePorts(min, max)) {
      const rtp = addon.open(fam, bindAddress, port);
      if (rtp < 0) {
        last = rtp;
        continue;
      }
      const rtcp = addon.open(fam, bindAddress, port + 1);
      if (rtcp < 0) {
        addon.close(rtp);
        last = rtcp;
        continue;
      }
      return new NativeSocketPair({ addon, rtp, rtcp }, port);
    }
    throw new Error(`no free RTP port pair in ${min}-${max} (last error: errno ${-last})`);
  }

  get rtcpPort(): number {
    return this.port + 1;
  }

  /** Send errors counted by the addon (full buffers, ICMP errors) plus refused sends. */
  get sendErrors(): number {
    if (this.closed) return this.sendFailures;
    const { addon, rtp, rtcp } = this.native;
    return this.sendFailures + addon.errors(rtp)[0] + addon.errors(rtcp)[0];
  }

  get connected(): boolean {
    return this.peer !== null;
  }

  /** As DgramSocketPair.connectRtp: only for a peer that sends from the port it announced. */
  connectRtp(address: string, port: number): void {
    if (this.closed || this.peer) return;
    if (this.native.addon.connect(this.native.rtp, address, port) === 0) this.peer = { address, port };
  }

  disconnectRtp(): void {
    if (!this.peer) return;
    this.peer = null;
    this.native.addon.disconnect(this.native.rtp);
  }

  /** Peer of the connected RTP socket, or null. */
  get connectedPeer(): { address: string; port: number } | null {
    return this.peer;
  }

  send(data: Uint8Array, address: string, port: number, rtcp: boolean): void {
    if (this.closed) return;
    const { addon } = this.native;
    let r: number;
    if (rtcp) r = addon.send(this.native.rtcp, data, address, port);
    else if (this.peer && this.peer.port === port && this.peer.address === address) r = addon.send(this.native.rtp, data, null, 0);
    else r = addon.send(this.native.rtp, data, address, port);
    if (r < 0) this.sendFailures++;
    else this.sent++;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    const { addon, rtp, rtcp } = this.native;
    this.sendFailures += addon.errors(rtp)[0] + addon.errors(rtcp)[0];
    setReceiver(rtp, undefined);
    setReceiver(rtcp, undefined);
    addon.close(rtp);
    addon.close(rtcp);
  }
}
