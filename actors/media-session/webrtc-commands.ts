/**
 * A session's WebRTC side: the `endpoint.webrtc.*` commands (create_from_offer, create_offer,
 * accept_answer with its generation check, accept_offer, ice_restart with its conflict count),
 * the endpoints' host (state changes and media into the session), and `endpoint.transfer` of a
 * WebRTC endpoint, out and in. Split from session.ts, which keeps the endpoints (routing and
 * the mixer are media-path.ts's); what this needs of the session is the narrow `WebRtcSession`.
 *
 * Transfer: the werift peer connection cannot leave its thread (webrtc-endpoint.ts says why),
 * so the endpoint object moves through the thread's `webrtcShelf` to a target session of the
 * same thread; a target on another thread finds nothing there and refuses, and the endpoint is
 * rolled back, still connected, as for any refused transfer.
 */
import { randomUUID } from 'node:crypto';
import { threadId } from 'node:worker_threads';
import { checkOfferGeneration } from '../../protocols/media/sdp/webrtc.js';
import type { CodecName } from '../../protocols/media/types.js';
import { iceRestartConflicts, transfers } from './metrics.js';
import { sessionIdOf, type AdoptOutcome, type Refusal, type SessionCommand, type SessionOutcome, type SessionResults, type SessionMethod } from './messages.js';
import type { SessionHost } from './session.js';
import type { WebRtcEndpointSnapshot } from './snapshot.js';
import { WebRtcEndpoint, webrtcShelf, type WebRtcHost } from './webrtc-endpoint.js';

/** What the WebRTC side needs of its session: what the other endpoint kinds' helpers get (session.ts), and two more. */
export interface WebRtcSession extends Pick<SessionHost, 'args' | 'env' | 'endpoints' | 'closed' | 'add' | 'detach' | 'replan' | 'full' | 'noEndpoint'> {
  /** Transfer rule 2: the recordings of the endpoint stop. */
  endpointGone(id: string): void;
  /** A payload the peer sent, for the mixer (when someone hears the endpoint). */
  mix(ep: WebRtcEndpoint, codec: CodecName, payload: Uint8Array): void;
}

type WebRtcCommand = Extract<SessionCommand, { method: `endpoint.webrtc.${string}` }>;

const ok = <M extends SessionMethod>(_c: { method: M }, result: SessionResults[M]) => ({ ok: true as const, result });
const fail = (code: Refusal['code'], message: string): Refusal => ({ ok: false, code, message });

export class WebRtcCommands {
  constructor(private readonly s: WebRtcSession) {}

  /** The endpoints' host: their state changes are events and re-plan routing; their media is mixed. */
  readonly host: WebRtcHost = {
    stateChanged: (ep, previous) => {
      this.s.env.emit('endpoint.state_changed', { endpoint_id: ep.id, type: 'webrtc', state: ep.state, previous_state: previous });
      if (this.s.endpoints.get(ep.id) === ep) this.s.replan();
    },
    media: (ep, codec, payload) => this.s.mix(ep, codec, payload),
  };

  async command(c: WebRtcCommand): Promise<SessionOutcome> {
    const s = this.s;
    const refuse = (r: { code: Refusal['code']; message: string }) => fail(r.code, r.message);
    if (c.method === 'endpoint.webrtc.create_from_offer' || c.method === 'endpoint.webrtc.create_offer') {
      if (s.endpoints.size >= s.args.maxEndpoints) return s.full();
      const a = s.args;
      const ep = new WebRtcEndpoint(randomUUID(), this.host, { advertisedAddress: a.advertisedAddress, bindAddress: a.bindAddress, portMin: a.rtpPortMin, portMax: a.rtpPortMax }, c.params.direction);
      const made = c.method === 'endpoint.webrtc.create_offer' ? await ep.offer(false) : await ep.answer(c.params.sdp);
      if (!made.ok || s.closed()) {
        ep.close();
        return made.ok ? fail('SESSION_NOT_FOUND', `session ${a.sessionId} closed while the endpoint was being made`) : refuse(made);
      }
      if (s.endpoints.size >= a.maxEndpoints) {
        ep.close();
        return s.full();
      }
      s.add(ep);
      return typeof made.value === 'string' ? ok(c as { method: 'endpoint.webrtc.create_from_offer' }, { endpoint_id: ep.id, sdp_answer: made.value }) : ok(c as { method: 'endpoint.webrtc.create_offer' }, { endpoint_id: ep.id, sdp_offer: made.value.sdp });
    }
    const ep = s.endpoints.get(c.params.endpoint_id);
    if (!ep) return s.noEndpoint(c.params.endpoint_id);
    if (ep.type !== 'webrtc') return fail('ENDPOINT_ERROR', `endpoint ${ep.id} is a ${ep.type} endpoint, not a WebRTC endpoint`);
    switch (c.method) {
      case 'endpoint.webrtc.accept_answer': {
        // Spec rule 1: the generation before anything of the SDP is read.
        const wrong = checkOfferGeneration(ep.pendingGeneration, c.params.offer_generation);
        if (wrong) return refuse(wrong);
        const r = await ep.acceptAnswer(c.params.sdp);
        return r.ok ? ok(c, {}) : refuse(r);
      }
      case 'endpoint.webrtc.accept_offer': {
        const r = await ep.answer(c.params.sdp);
        return r.ok ? ok(c, { sdp_answer: r.value }) : refuse(r);
      }
      case 'endpoint.webrtc.ice_restart': {
        const r = await ep.offer(true);
        if (!r.ok && r.code === 'OFFER_PENDING') iceRestartConflicts.inc();
        return r.ok ? ok(c, { sdp_offer: r.value.sdp, offer_generation: r.value.generation }) : refuse(r);
      }
    }
  }

  /** Transfer out: through this thread's shelf to the target, or rolled back when it refuses. */
  async transfer(ep: WebRtcEndpoint, targetSessionId: string, targetActor: string): Promise<SessionOutcome<'endpoint.transfer'>> {
    this.s.endpointGone(ep.id);
    this.s.detach(ep);
    ep.leave();
    webrtcShelf.set(ep.id, ep);
    let answer: AdoptOutcome;
    try {
      answer = await this.s.env.adoptElsewhere(targetActor, { kind: 'webrtc', id: ep.id, home: { actor: this.s.env.actorId, threadId } });
    } catch (err) {
      answer = fail('TRANSFER_FAILED', `the target session did not take the endpoint: ${(err as Error).message}`);
    }
    // Taken (even if its answer came too late): it is the target's now.
    if (!answer.ok && webrtcShelf.get(ep.id) === ep) {
      webrtcShelf.delete(ep.id);
      transfers.inc({ outcome: 'failed' });
      if (this.s.closed()) {
        ep.close('session closed');
        return fail('TRANSFER_FAILED', `${answer.message}; this session closed meanwhile, so the endpoint was closed`);
      }
      ep.arrive(this.host);
      this.s.add(ep);
      return fail('TRANSFER_FAILED', `${answer.message}; the endpoint stays in this session`);
    }
    transfers.inc({ outcome: 'same-thread' });
    this.s.env.emit('endpoint.transferred_out', { endpoint_id: ep.id, target_session_id: targetSessionId });
    return { ok: true, result: { endpoint_id: ep.id, target_session_id: targetSessionId } };
  }

  /** Transfer in (the session checked that it is open and has room): take the endpoint off this thread's shelf. */
  adopt(snapshot: WebRtcEndpointSnapshot, from: string): AdoptOutcome {
    const ep = webrtcShelf.get(snapshot.id);
    if (!ep) {
      return fail('TRANSFER_FAILED', `WebRTC endpoint ${snapshot.id} lives on thread ${snapshot.home.threadId} and the target session on thread ${threadId}: a werift peer connection (its sockets, DTLS and SRTP state) cannot leave its thread, so a WebRTC endpoint moves only between sessions of one thread (create the target with colocate_with)`);
    }
    webrtcShelf.delete(snapshot.id);
    ep.arrive(this.host);
    this.s.add(ep);
    this.s.env.emit('endpoint.transferred_in', { endpoint_id: ep.id, source_session_id: sessionIdOf(from) });
    return { ok: true, result: { endpoint_id: ep.id } };
  }
}
