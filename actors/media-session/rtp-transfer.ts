/**
 * `endpoint.transfer` of an RTP endpoint, both sides. The old session hands over a snapshot and
 * its sockets; packets that arrive while the target adopts it are held (copied: a native batch's
 * buffer is reused) and replayed to whoever owns the sockets afterwards, so a transfer loses none
 * even when the round trip takes several packet times. A target on the same thread takes the
 * sockets from the shelf; one on another thread cannot (a socket stays on its thread), so the old
 * session keeps them and relays (relays.ts). A refusal rolls the endpoint back as it was.
 * WebRTC endpoints move by webrtc-commands.ts.
 */
import { markReported, transfers } from './metrics.js';
import { refusal, sessionIdOf, type AdoptOutcome, type SessionOutcome } from './messages.js';
import type { Relays } from './relays.js';
import { RtpEndpoint, type RtpHost } from './rtp-endpoint.js';
import type { SessionEnv } from './session.js';
import type { RtpEndpointSnapshot } from './snapshot.js';
import { shelf } from './sockets.js';

/** Packets kept for a transferred endpoint while its target adopts it (1 s of a 20 ms stream). */
const MAX_HELD_IN_TRANSFER = 50;

/** What a transfer needs of its session. */
export interface TransferHost {
  readonly rtpHost: RtpHost;
  readonly env: Pick<SessionEnv, 'adoptElsewhere' | 'emit' | 'relayClose' | 'relayRetarget'>;
  readonly relays: Relays;
  readonly actorId: string;
  /** Take the endpoint out of routing and stop its recordings (transfer rule 2: not restarted on rollback). */
  release(ep: RtpEndpoint): void;
  add(ep: RtpEndpoint): void;
}

/** Move `ep` to the session actor `targetActor`; on a refusal it comes back as it was. */
export async function transferRtpOut(host: TransferHost, ep: RtpEndpoint, targetSessionId: string, targetActor: string): Promise<SessionOutcome<'endpoint.transfer'>> {
  const id = ep.id;
  host.release(ep);
  const snapshot = ep.snapshot();
  const sockets = ep.handOver();
  const held: Array<[Buffer, string, number, boolean]> = [];
  const replay = () => {
    for (const [data, address, port, rtcp] of held.splice(0)) sockets?.onPacket(data, address, port, rtcp);
  };
  if (sockets) {
    sockets.onPacket = (data, address, port, rtcp) => {
      if (held.length < MAX_HELD_IN_TRANSFER) held.push([Buffer.from(data), address, port, rtcp]);
    };
    shelf.set(id, sockets);
  }
  let answer: AdoptOutcome;
  try {
    answer = await host.env.adoptElsewhere(targetActor, snapshot);
  } catch (err) {
    answer = refusal('TRANSFER_FAILED', `the target session did not take the endpoint: ${(err as Error).message}`);
  }
  if (!answer.ok) {
    // Roll back: the endpoint comes back as it was (its sockets are still on our shelf).
    const mine = sockets && shelf.get(id) === sockets;
    if (mine) shelf.delete(id);
    const back = new RtpEndpoint(id, host.rtpHost, snapshot, mine ? sockets : null);
    markReported(back, back.counters);
    host.add(back);
    replay();
    transfers.inc({ outcome: 'failed' });
    return refusal('TRANSFER_FAILED', `${answer.message}; the endpoint stays in this session`);
  }
  // The target runs on another thread: these sockets stay here and we relay for it.
  if (sockets && shelf.get(id) === sockets) host.relays.hold(id, sockets, targetActor);
  // Same thread: the target took the sockets and set their handler; elsewhere: the relay's.
  replay();
  transfers.inc({ outcome: host.relays.has(id) ? 'relayed' : 'same-thread' });
  host.env.emit('endpoint.transferred_out', { endpoint_id: id, target_session_id: targetSessionId });
  return { ok: true, result: { endpoint_id: id, target_session_id: targetSessionId } };
}

/** Transfer in: take an RTP endpoint from the session actor `from` (limits checked by the caller). */
export function adoptRtp(host: TransferHost, snapshot: RtpEndpointSnapshot, from: string): AdoptOutcome {
  const here = shelf.get(snapshot.id);
  let ep: RtpEndpoint;
  if (here) {
    shelf.delete(snapshot.id);
    const home = snapshot.home.actor;
    ep = new RtpEndpoint(snapshot.id, host.rtpHost, snapshot, here);
    // Came back to the thread that holds its sockets through a third session: the relay ends.
    if (home !== from && home !== host.actorId) host.env.relayClose(home, snapshot.id, false);
    if (home === host.actorId) host.relays.drop(snapshot.id);
  } else {
    ep = new RtpEndpoint(snapshot.id, host.rtpHost, snapshot, null);
    if (snapshot.home.actor !== from) host.env.relayRetarget(snapshot.home.actor, snapshot.id, host.actorId);
  }
  markReported(ep, ep.counters);
  host.add(ep);
  host.env.emit('endpoint.transferred_in', { endpoint_id: ep.id, source_session_id: sessionIdOf(from) });
  return { ok: true, result: { endpoint_id: ep.id } };
}
