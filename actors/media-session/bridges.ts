/**
 * A session's bridge endpoints (bridge-endpoint.ts): the glue between the pair's two sessions.
 * `endpoint.create_bridge` makes our side and asks the target session's actor for its side;
 * `attach` is that target's answer; `audio` takes the peer's 20 ms PCM frames into the mixer;
 * `detach` removes our side when the peer's went. Split from session.ts, which keeps the
 * endpoints and routing; what this needs of the session is a narrow `SessionHost`.
 */
import { randomUUID } from 'node:crypto';
import { isSource } from '../../protocols/media/routing.js';
import type { Direction } from '../../protocols/media/types.js';
import { BRIDGE_RATE, BridgeEndpoint, mirrorDirection } from './bridge-endpoint.js';
import { refusal, type BridgeAttach, type Refusal, type SessionCommand, type SessionOutcome } from './messages.js';
import type { SessionHost } from './session.js';

/** How much audio from a bridged session waits for this session's clock at most (the two clocks drift apart slowly). */
const BRIDGE_QUEUE_MS = 200;

type CreateBridge = Extract<SessionCommand, { method: 'endpoint.create_bridge' }>;

export class Bridges {
  constructor(private readonly s: Pick<SessionHost, 'args' | 'env' | 'endpoints' | 'closed' | 'add' | 'detach' | 'replan' | 'full' | 'pushPcm'>) {}

  private newBridge(id: string, peer: BridgeEndpoint['peer'], direction: Direction): BridgeEndpoint {
    return new BridgeEndpoint(id, peer, direction, (reason) => this.s.env.bridgeDetach(peer.actor, peer.endpointId, reason === 'session closed' ? 'peer session closed' : 'peer removed'));
  }

  /** `endpoint.create_bridge`: our side first (state new), then the target's; refused, ours goes again. */
  async create(c: CreateBridge, targetActor: string | undefined): Promise<SessionOutcome<'endpoint.create_bridge'>> {
    const s = this.s;
    const target = c.params.target_session_id;
    if (target === s.args.sessionId) return refusal('INVALID_PARAMS', 'target_session_id is this session; a bridge wires two sessions');
    if (!targetActor) return refusal('SESSION_NOT_FOUND', `session ${target} does not exist`);
    if (s.endpoints.size >= s.args.maxEndpoints) return s.full();
    const peer = { actor: targetActor, sessionId: target, endpointId: randomUUID() };
    const ep = this.newBridge(randomUUID(), peer, c.params.direction);
    // Our side holds its place (state new, inactive) while the target makes its side.
    s.add(ep);
    let answer: { ok: true } | Refusal;
    try {
      answer = await s.env.bridgeAttach(targetActor, { endpointId: peer.endpointId, direction: mirrorDirection(c.params.direction), peerActor: s.env.actorId, peerSessionId: s.args.sessionId, peerEndpointId: ep.id });
    } catch (err) {
      answer = refusal('SESSION_NOT_FOUND', `session ${target} did not answer: ${(err as Error).message}`);
    }
    if (!answer.ok || s.closed() || s.endpoints.get(ep.id) !== ep) {
      if (s.endpoints.get(ep.id) === ep) s.detach(ep);
      ep.close(answer.ok ? 'removed' : 'peer');
      return answer.ok ? refusal('SESSION_NOT_FOUND', `session ${s.args.sessionId} closed while the bridge was being made`) : answer;
    }
    ep.state = 'connected';
    s.env.emit('endpoint.state_changed', { endpoint_id: ep.id, type: 'bridge', state: 'connected', previous_state: 'new' });
    s.replan();
    return { ok: true, result: { endpoint_id: ep.id, target_endpoint_id: peer.endpointId } };
  }

  /** The other session of a bridge asks for our side of the pair. */
  attach(a: BridgeAttach): { ok: true } | Refusal {
    const s = this.s;
    if (s.closed()) return refusal('SESSION_NOT_FOUND', `session ${s.args.sessionId} is being destroyed`);
    if (s.endpoints.size >= s.args.maxEndpoints) {
      return refusal('LIMIT_EXCEEDED', `the target session has ${s.endpoints.size} endpoints; max_endpoints_per_session is ${s.args.maxEndpoints}`);
    }
    const ep = this.newBridge(a.endpointId, { actor: a.peerActor, sessionId: a.peerSessionId, endpointId: a.peerEndpointId }, a.direction);
    ep.state = 'connected';
    s.add(ep);
    s.env.emit('endpoint.bridged', { endpoint_id: ep.id, peer_session_id: a.peerSessionId, peer_endpoint_id: a.peerEndpointId });
    s.env.emit('endpoint.state_changed', { endpoint_id: ep.id, type: 'bridge', state: 'connected', previous_state: 'new' });
    return { ok: true };
  }

  /** One 20 ms frame of 48 kHz PCM from the peer, for the mixer (when our side is a source). */
  audio(endpointId: string, data: ArrayBuffer): void {
    const ep = this.s.endpoints.get(endpointId);
    if (ep?.type !== 'bridge' || !isSource(ep.direction)) return;
    ep.counters.framesIn++;
    this.s.pushPcm(ep.id, BRIDGE_RATE, new Int16Array(data), BRIDGE_QUEUE_MS);
  }

  /** The other side went: ours goes too, with an event for our owner. */
  detach(endpointId: string, reason: 'peer removed' | 'peer session closed'): void {
    const ep = this.s.endpoints.get(endpointId);
    if (ep?.type !== 'bridge') return;
    this.s.detach(ep);
    const removedAt = Date.now();
    ep.close('peer');
    this.s.env.emit('endpoint.bridge.removed', { endpoint_id: ep.id, peer_session_id: ep.peer.sessionId, reason, removed_at_epoch_ms: removedAt });
  }
}
