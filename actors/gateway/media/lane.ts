/**
 * One WebSocket connection ("lane") from the gateway to a media bridge backend, with the typed
 * MediaBridgeClient. The bridge runs every command on the session *bound* to the connection, so a
 * lane carries several sessions by binding the one a command is for (`session.attach`) just before
 * sending it. To keep that binding right, a lane runs one command at a time: the attach and the
 * command are never interleaved with another session's, and a failed attach never lets a command
 * fall on the previously bound session.
 *
 * The connection is opened on first use. When it drops while it carries sessions, it is reopened
 * in the background with the backend's backoff and every session is attached again (the bridge
 * keeps a dropped connection's sessions as orphans for its orphan timeout); a session the bridge no
 * longer has is reported through `gone`.
 */
import type { Logger } from 'pino';
import { MediaBridgeClient } from '../../media-bridge/client.js';
import type { EventMessage } from '../../../protocols/media/envelope.js';
import { fromBridge, unavailable, MediaLinkError } from './errors.js';

/** What a lane needs of its backend: where to connect, the shared backoff, where events go. */
export interface LaneHost {
  readonly url: string;
  readonly token: string | undefined;
  readonly log: Logger;
  /** Deadline of each command sent to the bridge. */
  readonly commandTimeoutMs: number;
  /** Deadline of the WebSocket handshake. */
  readonly connectTimeoutMs: number;
  /** Throws BACKEND_UNAVAILABLE while the backend is in its backoff after a failed attempt. */
  gate(): void;
  connected(lane: Lane): void;
  disconnected(lane: Lane): void;
  /** A connection attempt failed: returns what an owner may be told (no address). */
  failed(err: Error): string;
  /** ms until the next attempt may be made. */
  retryInMs(): number;
  event(e: EventMessage): void;
  /** A session of this lane the bridge no longer has (found when attaching it again). */
  gone(sessionId: string, reason: string): void;
}

export class Lane {
  /** Sessions created through this lane: the bridge sends their events here. */
  readonly sessions = new Set<string>();
  private client: MediaBridgeClient | null = null;
  private bound: string | null = null;
  private tail: Promise<unknown> = Promise.resolve();
  private retryTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly host: LaneHost, readonly index: number) {}

  get isOpen(): boolean {
    return this.client !== null;
  }

  /**
   * Run `method` on `sessionId` (null: a command that needs no bound session, session.create).
   * Resolves with the bridge's result; rejects with a MediaLinkError.
   */
  call(sessionId: string | null, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.serial(async () => {
      const c = await this.ensure();
      let attached = false;
      if (sessionId !== null && this.bound !== sessionId) {
        await this.attach(c, sessionId);
        attached = true;
      }
      try {
        return this.after(method, await this.send(c, method, params));
      } catch (err) {
        // NO_SESSION: the bridge unbound the session under us (taken over, or our record of the
        // binding is stale): bind it again once.
        if (!(err instanceof MediaLinkError) || err.code !== 'NO_SESSION' || sessionId === null || attached) throw err;
        await this.attach(c, sessionId);
        return this.after(method, await this.send(c, method, params));
      }
    });
  }

  /** Close the connection; no reconnection after this. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const c = this.client;
    this.client = null;
    await c?.close().catch(() => undefined);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async send(c: MediaBridgeClient, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    try {
      return await c.call(method, params);
    } catch (err) {
      const e = fromBridge(err);
      if (e.code === 'BACKEND_UNAVAILABLE') this.bound = null; // no reply: what is bound is unknown
      throw e;
    }
  }

  private after(method: string, result: Record<string, unknown>): Record<string, unknown> {
    if (method === 'session.create' && typeof result.session_id === 'string') {
      this.bound = result.session_id;
      this.sessions.add(result.session_id);
    } else if (method === 'session.destroy') this.bound = null;
    return result;
  }

  private async attach(c: MediaBridgeClient, sessionId: string): Promise<void> {
    this.bound = null;
    await this.send(c, 'session.attach', { session_id: sessionId });
    this.bound = sessionId;
  }

  /** The open client, connecting (and attaching this lane's sessions again) when there is none. */
  private async ensure(background = false): Promise<MediaBridgeClient> {
    if (this.client) return this.client;
    if (this.closed) throw unavailable('the gateway is closing its media link');
    if (!background) this.host.gate();
    let c: MediaBridgeClient;
    try {
      c = await this.connect();
    } catch (err) {
      const why = this.host.failed(err as Error);
      this.scheduleRetry();
      throw unavailable(why);
    }
    if (this.closed) {
      await c.close().catch(() => undefined);
      throw unavailable('the gateway is closing its media link');
    }
    this.client = c;
    this.bound = null;
    c.events$.subscribe({ next: (e) => this.host.event(e), complete: () => this.dropped(c) });
    this.host.connected(this);
    await this.reattach(c);
    return c;
  }

  private connect(): Promise<MediaBridgeClient> {
    const { url, token, commandTimeoutMs, connectTimeoutMs } = this.host;
    const attempt = MediaBridgeClient.connect(url, { token, timeoutMs: commandTimeoutMs });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // A handshake that completes after the deadline is closed at once.
        void attempt.then((late) => late.close(), () => undefined);
        reject(new Error(`no WebSocket handshake within ${connectTimeoutMs} ms`));
      }, connectTimeoutMs);
    });
    return Promise.race([attempt, deadline]).finally(() => clearTimeout(timer));
  }

  /** After a reconnection: bind every session of this lane to the new connection. */
  private async reattach(c: MediaBridgeClient): Promise<void> {
    for (const id of [...this.sessions]) {
      try {
        await this.attach(c, id);
      } catch (err) {
        const e = err as MediaLinkError;
        if (e.code === 'BACKEND_UNAVAILABLE') throw e;
        this.sessions.delete(id);
        this.host.gone(id, `the session ended on the media bridge while the gateway was disconnected from it (${e.code})`);
      }
    }
    if (this.sessions.size) this.host.log.info({ sessions: this.sessions.size, lane: this.index }, 'media bridge sessions attached again after reconnecting');
  }

  private dropped(c: MediaBridgeClient): void {
    if (this.client !== c) return;
    this.client = null;
    this.bound = null;
    this.host.disconnected(this);
    this.scheduleRetry();
  }

  /** Reconnect in the background while the lane carries sessions (their orphan timer runs on the bridge). */
  private scheduleRetry(): void {
    if (this.closed || this.retryTimer || this.sessions.size === 0) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.closed || this.client || this.sessions.size === 0) return;
      this.serial(() => this.ensure(true)).catch(() => this.scheduleRetry());
    }, this.host.retryInMs());
    this.retryTimer.unref();
  }
}
