/**
 * One media bridge backend as the gateway sees it: its URL, a few lanes (connections) to it, and
 * its health with the reconnection backoff the lanes share. A failed connection attempt marks the
 * backend down: for the backoff (doubling from `minMs` to `maxMs`) commands on it fail at once with
 * BACKEND_UNAVAILABLE instead of each waiting for a connection; the next attempt after it may
 * succeed and clears it.
 */
import type { Logger } from 'pino';
import type { EventMessage } from '../../../protocols/media/envelope.js';
import { unavailable } from './errors.js';
import { Lane, type LaneHost } from './lane.js';
import { backendConnectFailures, backendConnections, backendLabel, backendUp } from './metrics.js';

export interface BackendOptions {
  url: string;
  index: number;
  token: string | undefined;
  log: Logger;
  lanes: number;
  backoff: { minMs: number; maxMs: number };
  commandTimeoutMs: number;
  connectTimeoutMs: number;
  event(e: EventMessage): void;
  gone(sessionId: string, reason: string): void;
}

export class Backend implements LaneHost {
  readonly url: string;
  readonly index: number;
  readonly label: string;
  readonly token: string | undefined;
  readonly log: Logger;
  readonly commandTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly lanes: Lane[];
  /** Sessions held here, and creations under way (placement counts both). */
  load = 0;
  private down = false;
  private retryAt = 0;
  private backoffMs: number;
  private lastError = '';
  private open = 0;

  constructor(private readonly o: BackendOptions) {
    this.url = o.url;
    this.index = o.index;
    this.label = backendLabel(o.url);
    this.token = o.token;
    this.log = o.log.child({ ns: 'bridge', backend: this.label });
    this.commandTimeoutMs = o.commandTimeoutMs;
    this.connectTimeoutMs = o.connectTimeoutMs;
    this.backoffMs = o.backoff.minMs;
    this.lanes = Array.from({ length: o.lanes }, (_, i) => new Lane(this, i));
    backendConnections.set({ backend: this.label }, 0);
  }

  /** Sessions held here (the lanes' records; creations under way not included). */
  get sessions(): number {
    return this.lanes.reduce((n, l) => n + l.sessions.size, 0);
  }

  /** Reachable as far as we know (never tried counts as reachable). */
  get reachable(): boolean {
    return !this.down;
  }

  /** The lane for a new session: the one carrying the fewest, ties to an open one, then the first. */
  pickLane(): Lane {
    return this.lanes.reduce((best, l) => (l.sessions.size < best.sessions.size || (l.sessions.size === best.sessions.size && l.isOpen && !best.isOpen) ? l : best));
  }

  gate(): void {
    const wait = this.retryInMs();
    if (this.down && wait > 0) throw unavailable(`${this.lastError}; next connection attempt in ${wait} ms`);
  }

  retryInMs(): number {
    return Math.max(0, this.retryAt - Date.now());
  }

  connected(lane: Lane): void {
    this.open++;
    backendConnections.set({ backend: this.label }, this.open);
    backendUp.set({ backend: this.label }, 1);
    if (this.down) this.log.info({ lane: lane.index }, 'media bridge backend reachable again');
    else this.log.info({ lane: lane.index }, 'connected to media bridge backend');
    this.down = false;
    this.backoffMs = this.o.backoff.minMs;
  }

  disconnected(lane: Lane): void {
    this.open--;
    backendConnections.set({ backend: this.label }, this.open);
    this.log.warn({ lane: lane.index, sessions: lane.sessions.size }, 'media bridge connection lost');
  }

  failed(err: Error): string {
    backendConnectFailures.inc({ backend: this.label });
    backendUp.set({ backend: this.label }, 0);
    // The errno code only: a system error's message names the address, which owners are not told.
    const code = (err as NodeJS.ErrnoException).code;
    this.lastError = `cannot connect (${code ?? err.message})`;
    if (!this.down) this.log.warn({ err: err.message }, 'media bridge backend unreachable');
    this.down = true;
    this.retryAt = Date.now() + this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.o.backoff.maxMs);
    return this.lastError;
  }

  event(e: EventMessage): void {
    this.o.event(e);
  }

  gone(sessionId: string, reason: string): void {
    this.o.gone(sessionId, reason);
  }

  async close(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.close()));
    backendConnections.set({ backend: this.label }, 0);
  }
}
