/**
 * Owners of HTTP-owned calls: an application that is not connected by WebSocket places a call
 * with `POST /calls {…, receiverUrl}`; the call's owner is then `h:<n>`, and what a control
 * connection would receive goes to the receiverUrl as HTTP POSTs — events as
 * `{event, data}` (answered 2xx, body ignored), the gateway's requests (`sip.reinvite`) as
 * `{method, params}` answered with the JSON answer. Every POST in flight is a follow-up
 * callback the drain waits for (`inFlight`). The owner is forgotten once its call has ended
 * and that event is delivered (or failed). Media sessions created over HTTP belong to the one
 * owner `HTTP_MEDIA_OWNER` (they live until DELETE /sessions/:id; their events are not sent
 * anywhere).
 */
import type { Logger } from 'pino';
import { AskError } from './calls.js';

export const HTTP_OWNER_PREFIX = 'h:';
export const HTTP_MEDIA_OWNER = 'http';

/** Events after which an HTTP owner's call is over. */
const FINAL_EVENTS = new Set(['sip.ended', 'sip.cancelled']);

export const isHttpOwner = (owner: string) => owner.startsWith(HTTP_OWNER_PREFIX);

export class HttpOwners {
  private readonly owners = new Map<string, { receiverUrl: string }>();
  private next = 1;
  /** Callback POSTs in flight. */
  inFlight = 0;

  constructor(private readonly o: { log: Logger; timeoutMs: number }) {}

  add(receiverUrl: string): string {
    const id = `${HTTP_OWNER_PREFIX}${this.next++}`;
    this.owners.set(id, { receiverUrl });
    return id;
  }

  has(owner: string): boolean {
    return this.owners.has(owner);
  }

  remove(owner: string): void {
    this.owners.delete(owner);
  }

  emit(owner: string, event: string, data: Record<string, unknown>): void {
    const o = this.owners.get(owner);
    if (!o) return;
    if (FINAL_EVENTS.has(event)) this.owners.delete(owner);
    this.post(o.receiverUrl, { event, data }, this.o.timeoutMs).catch((err: Error) =>
      this.o.log.warn({ ns: 'control', owner, event, err: err.message }, 'follow-up callback failed'),
    );
  }

  async ask(owner: string, method: string, params: Record<string, unknown>, timeoutMs: number): Promise<Record<string, unknown>> {
    const o = this.owners.get(owner);
    if (!o) throw new AskError('gone', 'the HTTP owner is gone');
    let answer: unknown;
    try {
      answer = await this.post(o.receiverUrl, { method, params }, timeoutMs);
    } catch (err) {
      throw new AskError((err as Error).name === 'TimeoutError' ? 'timeout' : 'error', `the receiverUrl failed: ${(err as Error).message}`);
    }
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) throw new AskError('error', 'the receiverUrl answered no JSON object');
    return answer as Record<string, unknown>;
  }

  private async post(url: string, body: unknown, timeoutMs: number): Promise<unknown> {
    this.inFlight++;
    try {
      const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
      const text = await res.text();
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      try {
        return text ? JSON.parse(text) : null;
      } catch {
        return null;
      }
    } finally {
      this.inFlight--;
    }
  }
}
