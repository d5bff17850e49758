/**
 * A bridge endpoint: one side of a pair that wires two sessions together
 * (`endpoint.create_bridge`, alias `session.bridge`). What this session's routing sends to it
 * is mixed as 48 kHz PCM and sent to the peer session's actor, 20 ms per runtime message; what
 * the peer sends comes in the same way and is a source here. No codec, no RTP, no sockets.
 *
 * Decisions:
 * - States new → connected (spec): `new` while the peer session creates its side, `connected`
 *   once both exist. Routing treats it as `inactive` until connected.
 * - The pair's directions mirror each other: a side created `sendonly` (the peer session only
 *   sends to us) makes the other side `recvonly`. `endpoint.update_direction` changes one side
 *   only (its routing in its session); `auto` restores the direction it was created with.
 * - Closing one side closes the other: close() tells the peer (unless the peer's own close is
 *   what closes it, `fromPeer`), whether the side was removed or its session ended.
 * - A bridge destination never hears another bridge source (protocols/media/routing.ts), so
 *   rings of bridged sessions carry no audio back to where it came from.
 */
import type { Direction } from '../../protocols/media/types.js';
import type { EndpointInfo } from '../../protocols/media/results.js';
import type { EndpointCloseReason } from './rtp-endpoint.js';

/** The PCM rate between bridged sessions (Opus's: nothing any codec carries is lost). */
export const BRIDGE_RATE = 48_000;

export type BridgeState = 'new' | 'connected';

export interface BridgePeer {
  actor: string;
  sessionId: string;
  endpointId: string;
}

/** The direction of the other side of a pair whose one side has `d`. */
export function mirrorDirection(d: Direction): Direction {
  return d === 'sendonly' ? 'recvonly' : d === 'recvonly' ? 'sendonly' : d;
}

export class BridgeEndpoint {
  readonly type = 'bridge' as const;
  state: BridgeState = 'new';
  override: Direction | null = null;
  readonly counters = { framesIn: 0, framesOut: 0 };
  private closedBy: EndpointCloseReason | 'peer' | null = null;

  constructor(
    readonly id: string,
    readonly peer: BridgePeer,
    readonly baseDirection: Direction,
    /** Tells the peer session to close its side: called once, by close(), unless the peer closed first. */
    private readonly release: (reason: EndpointCloseReason) => void,
  ) {}

  get direction(): Direction {
    return this.state === 'connected' ? (this.override ?? this.baseDirection) : 'inactive';
  }

  /** One outgoing 20 ms frame as a transferable buffer. */
  frameOut(pcm: Int16Array): ArrayBuffer {
    this.counters.framesOut++;
    return pcm.byteOffset === 0 && pcm.byteLength === pcm.buffer.byteLength ? (pcm.buffer as ArrayBuffer) : pcm.slice().buffer;
  }

  get closed(): boolean {
    return this.closedBy !== null;
  }

  /** Close this side, once; the peer's side is closed too unless it is the one that closed (`peer`). */
  close(reason: EndpointCloseReason | 'peer' = 'removed'): void {
    if (this.closedBy) return;
    this.closedBy = reason;
    if (reason !== 'peer') this.release(reason);
  }

  info(): EndpointInfo {
    return {
      endpoint_id: this.id,
      type: 'bridge',
      state: this.state,
      direction: this.direction,
      direction_mode: this.override ? 'manual' : 'auto',
      peer_session_id: this.peer.sessionId,
      peer_endpoint_id: this.peer.endpointId,
      counters: { ...this.counters },
    };
  }
}
