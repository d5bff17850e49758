/**
 * A session's WebSocket PCM endpoints (ws-endpoint.ts): `endpoint.create_websocket` (the endpoint,
 * its connect token and the connect timeout) and the callbacks of the front, which owns the
 * client's socket (actors/media-bridge/audio.ts): the client dialled in, sent audio, or went.
 * Split from session.ts, which keeps the endpoints and routing; what this needs of the session
 * is a narrow `SessionHost`.
 */
import { randomUUID } from 'node:crypto';
import { AUDIO_PATH_PREFIX } from '../../protocols/media/commands.js';
import { isSource } from '../../protocols/media/routing.js';
import type { SessionCommand, SessionOutcome } from './messages.js';
import type { SessionHost } from './session.js';
import { WsEndpoint } from './ws-endpoint.js';

/** How much inbound WebSocket audio waits for the clock at most (the front refuses a client faster than real time). */
const WS_QUEUE_MS = 1000;
/** MEDIA_WS_CONNECT_TIMEOUT_MS's default. */
export const DEFAULT_WS_CONNECT_TIMEOUT_MS = 30_000;

type CreateWebSocket = Extract<SessionCommand, { method: 'endpoint.create_websocket' }>;

export class WebSockets {
  constructor(private readonly s: Pick<SessionHost, 'args' | 'env' | 'endpoints' | 'closed' | 'add' | 'detach' | 'replan' | 'full' | 'pushPcm' | 'forget'>) {}

  /** `endpoint.create_websocket`: the endpoint waits `connecting` for its client, removed when none comes in time. */
  create(c: CreateWebSocket): SessionOutcome<'endpoint.create_websocket'> {
    const s = this.s;
    if (s.endpoints.size >= s.args.maxEndpoints) return s.full();
    const id = randomUUID();
    const token = randomUUID();
    const ep = new WsEndpoint(id, c.params.sample_rate, c.params.direction, (reason) => s.env.wsClose(id, reason));
    s.add(ep);
    const timeoutMs = s.args.wsConnectTimeoutMs ?? DEFAULT_WS_CONNECT_TIMEOUT_MS;
    s.env.setTimeout(() => {
      if (s.endpoints.get(id) !== ep || ep.state !== 'connecting') return;
      s.detach(ep);
      const removedAt = Date.now();
      ep.close('removed');
      s.env.emit('endpoint.state_changed', { endpoint_id: id, type: 'websocket', state: 'disconnected', previous_state: 'connecting' });
      s.env.emit('endpoint.ws.connect_timeout', { endpoint_id: id, timeout_ms: timeoutMs, removed_at_epoch_ms: removedAt });
    }, timeoutMs);
    return { ok: true, result: { endpoint_id: id, connect_token: token, audio_path: `${AUDIO_PATH_PREFIX}${token}` } };
  }

  /** The client dialled in with the endpoint's token; false when the endpoint is gone (the front closes the socket). */
  opened(endpointId: string): boolean {
    const ep = this.s.endpoints.get(endpointId);
    if (ep?.type !== 'websocket' || ep.state !== 'connecting' || this.s.closed()) return false;
    ep.state = 'connected';
    this.s.env.emit('endpoint.state_changed', { endpoint_id: ep.id, type: 'websocket', state: 'connected', previous_state: 'connecting' });
    this.s.replan();
    return true;
  }

  /** Audio from the client: its samples queue for the mixer (when the endpoint is a source). */
  audio(endpointId: string, data: Uint8Array): void {
    const ep = this.s.endpoints.get(endpointId);
    if (ep?.type !== 'websocket' || ep.state !== 'connected') return;
    const pcm = ep.samples(data);
    if (pcm.length > 0 && isSource(ep.direction)) this.s.pushPcm(ep.id, ep.sampleRate, pcm, WS_QUEUE_MS);
  }

  /** The client's socket closed (the client, the front's overload guard, or our own close). */
  closed(endpointId: string): void {
    const ep = this.s.endpoints.get(endpointId);
    if (ep?.type !== 'websocket' || ep.state !== 'connected') return;
    ep.state = 'disconnected';
    this.s.forget(ep.id);
    this.s.env.emit('endpoint.state_changed', { endpoint_id: ep.id, type: 'websocket', state: 'disconnected', previous_state: 'connected' });
    this.s.replan();
  }
}
