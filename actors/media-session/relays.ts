/**
 * The sockets a session keeps for its RTP endpoints that moved to a session on another thread.
 * A UDP socket cannot move between threads, so the endpoint's old home keeps it: packets that
 * arrive on it are relayed to the endpoint's new owner (and on, if it moves again), and the owner's
 * packets are sent from it. The session that made the sockets owns them until the endpoint ends,
 * comes home through a third session, or the session itself closes.
 */
import { shelf } from './sockets.js';
import type { SocketPair } from './socket-pair.js';
import type { SessionEnv } from './session.js';

export class Relays {
  private readonly held = new Map<string, { sockets: SocketPair; target: string }>();

  constructor(private readonly env: Pick<SessionEnv, 'relayIn'>) {}

  get size(): number {
    return this.held.size;
  }

  has(endpointId: string): boolean {
    return this.held.has(endpointId);
  }

  /** Endpoint `endpointId` moved to `target` on another thread: its sockets stay here, its packets go there. */
  hold(endpointId: string, sockets: SocketPair, target: string): void {
    this.held.set(endpointId, { sockets, target });
    sockets.onPacket = (data, address, port, rtcp) => this.env.relayIn(this.held.get(endpointId)!.target, endpointId, data, address, port, rtcp);
  }

  /** The endpoint came home through a third session, which took its sockets: the relay ends, sockets open. */
  drop(endpointId: string): void {
    this.held.delete(endpointId);
  }

  /** Send a datagram for a departed endpoint from the sockets kept for it. */
  send(endpointId: string, data: Uint8Array, address: string, port: number, rtcp: boolean): void {
    this.held.get(endpointId)?.sockets.send(data, address, port, rtcp);
  }

  /** A departed endpoint moved on to `to`: its packets now go there. */
  retarget(endpointId: string, to: string): void {
    const r = this.held.get(endpointId);
    if (r) r.target = to;
  }

  /** A departed endpoint ended (close its sockets) or came home through a third session (they stay open). */
  close(endpointId: string, closeSockets: boolean): void {
    const r = this.held.get(endpointId);
    if (!r) return;
    this.held.delete(endpointId);
    shelf.delete(endpointId);
    if (closeSockets) r.sockets.close();
  }

  /** The session ends: every kept socket closes. */
  closeAll(): void {
    for (const [id, r] of this.held) {
      r.sockets.close();
      shelf.delete(id);
    }
    this.held.clear();
  }
}
