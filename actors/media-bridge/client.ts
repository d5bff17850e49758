/**
 * A typed client for the media bridge's command protocol, for applications and tests:
 *
 *   import { MediaBridgeClient } from 'hostd/media-client';
 *   const bridge = await MediaBridgeClient.connect('ws://127.0.0.1:3002', { token });
 *   const { session_id } = await bridge.call('session.create', {});
 *   const { endpoint_id, sdp_answer } = await bridge.call('endpoint.rtp.create_from_offer', { sdp });
 *   bridge.on('endpoint.state_changed', (e) => console.log(e.state));
 *
 * Failed commands reject with a MediaBridgeError carrying the protocol's error code.
 */
import { CommandSocket } from '../../runtime/http/command-socket.js';
import type { ParamsFor, Method } from '../../protocols/media/commands.js';
import type { ErrorCode, EventMessage } from '../../protocols/media/envelope.js';
import type { Events, Results } from '../../protocols/media/results.js';
import type { Observable } from 'rxjs';

export class MediaBridgeError extends Error {
  constructor(readonly code: ErrorCode, message: string, readonly method: string) {
    super(`${method}: ${code}: ${message}`);
    this.name = 'MediaBridgeError';
  }
}

/** Params as the caller writes them: any may be left out here (those with defaults may be; the bridge names a missing required one). */
type Input<M extends Method> = Partial<ParamsFor<M>> & Record<string, unknown>;

export interface ConnectOptions {
  token?: string;
  /** Deadline of each command (default 15 s). */
  timeoutMs?: number;
}

export class MediaBridgeClient {
  private constructor(private readonly s: CommandSocket) {}

  /** Every event pushed to this connection. */
  get events$(): Observable<EventMessage> {
    return this.s.events$;
  }

  static async connect(url: string, o: ConnectOptions = {}): Promise<MediaBridgeClient> {
    const ws = await CommandSocket.open(url, 'bridge', o.token ? { token: o.token } : {});
    return new MediaBridgeClient(new CommandSocket(ws, o.timeoutMs ?? 15_000, (code, message, method) => new MediaBridgeError(code as ErrorCode, message, method)));
  }

  /** Send a command; resolves with its result, rejects with MediaBridgeError on an error reply. */
  call<M extends Method>(method: M, params: Input<M>): Promise<Results[M]>;
  call(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  call(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    return this.s.call(method, params);
  }

  /** Send any JSON value as a command message (for testing the bridge's validation). */
  send(message: unknown, method?: string, id?: string): Promise<Record<string, unknown>> {
    return this.s.send(message, method, id);
  }

  /** Send a raw text frame; `id` is what the reply will carry (null for unparseable input). */
  raw(text: string, method?: string, id?: string | null): Promise<Record<string, unknown>> {
    return this.s.raw(text, method, id);
  }

  on<E extends keyof Events>(event: E, fn: (data: Events[E]) => void): () => void {
    return this.s.on(event, fn as (data: Record<string, unknown>) => void);
  }

  /** The next event of this kind that satisfies `match`, within `ms`. */
  waitFor<E extends keyof Events>(event: E, match: (data: Events[E]) => boolean = () => true, ms = 10_000): Promise<Events[E]> {
    return this.s.waitFor(event, match as (data: Record<string, unknown>) => boolean, ms) as Promise<Events[E]>;
  }

  close(): Promise<void> {
    return this.s.close();
  }
}
