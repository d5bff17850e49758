/**
 * A WebSocket PCM endpoint: raw 16-bit little-endian mono audio at 8, 16 or 48 kHz over a
 * WebSocket the client dials on the command port (`/audio/<connect_token>`). The bridge front
 * owns the socket (actors/media-bridge/audio.ts) and passes frames across threads; this class
 * is the session's side: its state, the reframing of what arrives, its counters.
 *
 * Decisions:
 * - States connecting → connected → disconnected (spec). No reconnect: a closed endpoint stays
 *   `disconnected` until removed; a client that wants to come back asks for a new endpoint.
 * - In routing the endpoint is `inactive` until connected and after it disconnects; while
 *   connected it has the direction it was created with (or the override).
 * - Inbound binary messages of any length are cut into samples; an odd byte is carried to the
 *   next message, so sample alignment survives any split. The session queues the samples for
 *   the mixer (1 s at most, the oldest dropped beyond it) and takes them 20 ms per tick.
 * - Outbound: one binary message of 20 ms per tick, only when some source had audio.
 */
import type { Direction } from '../../protocols/media/types.js';
import type { EndpointInfo } from '../../protocols/media/results.js';
import type { EndpointCloseReason } from './rtp-endpoint.js';

export type WsState = 'connecting' | 'connected' | 'disconnected';

export class WsEndpoint {
  readonly type = 'websocket' as const;
  state: WsState = 'connecting';
  override: Direction | null = null;
  readonly counters = { messagesIn: 0, bytesIn: 0, framesOut: 0, bytesOut: 0 };
  /** The odd byte of the last message, waiting for its other half. */
  private carry: number | null = null;
  private closedBy: EndpointCloseReason | null = null;

  constructor(
    readonly id: string,
    readonly sampleRate: number,
    readonly baseDirection: Direction,
    /** Tells the front to close the client's socket (and forget its token): called once, by close(). */
    private readonly release: (reason: string) => void,
  ) {}

  get direction(): Direction {
    return this.state === 'connected' ? (this.override ?? this.baseDirection) : 'inactive';
  }

  /** A binary message from the client as samples (any length; an odd byte waits for the next). */
  samples(data: Uint8Array): Int16Array {
    this.counters.messagesIn++;
    this.counters.bytesIn += data.length;
    let bytes = data;
    if (this.carry !== null && data.length > 0) {
      bytes = new Uint8Array(data.length + 1);
      bytes[0] = this.carry;
      bytes.set(data, 1);
      this.carry = null;
    }
    const n = bytes.length >> 1;
    if (bytes.length & 1) this.carry = bytes[bytes.length - 1]!;
    const out = new Int16Array(n);
    const view = new DataView(bytes.buffer, bytes.byteOffset, n * 2);
    for (let i = 0; i < n; i++) out[i] = view.getInt16(i * 2, true);
    return out;
  }

  /** One outgoing frame as little-endian bytes. */
  encode(pcm: Int16Array): ArrayBuffer {
    const ab = new ArrayBuffer(pcm.length * 2);
    const view = new DataView(ab);
    for (let i = 0; i < pcm.length; i++) view.setInt16(i * 2, pcm[i]!, true);
    this.counters.framesOut++;
    this.counters.bytesOut += ab.byteLength;
    return ab;
  }

  get closed(): boolean {
    return this.closedBy !== null;
  }

  /** Close the endpoint, once: the client's socket is closed by the front. */
  close(reason: EndpointCloseReason = 'removed'): void {
    if (this.closedBy) return;
    this.closedBy = reason;
    this.state = 'disconnected';
    this.release(reason);
  }

  info(): EndpointInfo {
    return {
      endpoint_id: this.id,
      type: 'websocket',
      state: this.state,
      direction: this.direction,
      direction_mode: this.override ? 'manual' : 'auto',
      sample_rate: this.sampleRate,
      counters: { ...this.counters },
    };
  }
}
