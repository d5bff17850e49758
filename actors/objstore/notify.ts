/**
 * The object store's notifier: every notification goes to the log (always, each occurrence) and,
 * when OBJSTORE_CHAT_WEBHOOK_URL is set, to the chat webhook as one JSON POST (protocols/objstore/
 * notify.ts webhookBody), with a timeout; a failed or slow webhook is logged and never blocks the
 * caller (notify() does not wait for it; the test endpoint does, to say what was delivered).
 * Deduplication per key with a cooldown (a higher severity passes) applies to the webhook only:
 * the log gets every occurrence. The webhook URL holds a token: it is never logged or answered.
 *
 * One notifier per object store, in the store actor's thread; the scheduler (another thread) sends
 * its notifications there as `notify` messages (actors/objstore/messages.ts).
 */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { DEFAULT_NOTIFY_COOLDOWN_MS, shouldSend, webhookBody, type Notification, type Sent } from '../../protocols/objstore/notify.js';

export interface NotifyOutcome {
  /** where it went: 'log' always, 'webhook' when it was accepted (2xx) */
  delivered: string[];
  failed: Array<{ transport: string; error: string }>;
  /** the webhook was skipped: the same key went out within the cooldown */
  suppressed: boolean;
  /** the transports configured */
  transports: string[];
}

export interface NotifierOptions {
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  webhookUrl: string;
  timeoutMs?: number;
  cooldownMs?: number;
}

export const WEBHOOK_TIMEOUT_MS = 10_000;

export class Notifier {
  private readonly sent = new Map<string, Sent>();
  private readonly opts: Required<NotifierOptions>;
  private readonly host = hostname();

  constructor(opts: NotifierOptions) {
    this.opts = { timeoutMs: WEBHOOK_TIMEOUT_MS, cooldownMs: DEFAULT_NOTIFY_COOLDOWN_MS, ...opts };
  }

  get transports(): string[] {
    return this.opts.webhookUrl ? ['log', 'webhook'] : ['log'];
  }

  /** Tell it, without waiting for the webhook (a condition of the store: never blocks its caller). */
  notify(n: Notification): void {
    void this.deliver(n, false);
  }

  /**
   * Tell it and wait for the outcome. `force` bypasses the cooldown (the test endpoint). Never
   * throws: a failed webhook is in `failed` and in the log.
   */
  async deliver(n: Notification, force: boolean, now = Date.now()): Promise<NotifyOutcome> {
    const level = n.severity === 'critical' ? 'error' : n.severity === 'warning' ? 'warn' : 'info';
    this.opts.log[level]({ notification: { severity: n.severity, key: n.key, title: n.title, body: n.body } }, `notification: ${n.title}`);
    const out: NotifyOutcome = { delivered: ['log'], failed: [], suppressed: false, transports: this.transports };
    if (!this.opts.webhookUrl) return out;
    if (!force && !shouldSend(this.sent.get(n.key), n.severity, now, this.opts.cooldownMs)) {
      out.suppressed = true;
      return out;
    }
    this.sent.set(n.key, { at: now, severity: n.severity });
    try {
      const res = await fetch(this.opts.webhookUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json; charset=utf-8' },
        body: JSON.stringify(webhookBody(n, this.host)),
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (!res.ok) throw new Error(`the webhook answered ${res.status} ${res.statusText}`);
      out.delivered.push('webhook');
    } catch (err) {
      const e = err as Error;
      const error = e.name === 'TimeoutError' ? `no answer within ${this.opts.timeoutMs} ms` : (e.message.startsWith('the webhook') ? e.message : `cannot reach the webhook: ${(e.cause as Error | undefined)?.message ?? e.message}`);
      out.failed.push({ transport: 'webhook', error });
      this.opts.log.warn({ notification: { key: n.key, title: n.title }, err: error }, 'the chat webhook did not take a notification');
    }
    return out;
  }
}

/** A volume turned unhealthy and read-only (the health monitor, metadata.ts recordFault). */
export function unhealthyNotice(v: { id: number; label: string; faults: number }): Notification {
  return {
    severity: 'critical',
    key: `unhealthy:${v.id}`,
    title: `Volume ${v.id} is unhealthy and read-only`,
    body: `Volume ${v.id}${v.label ? ` (${v.label})` : ''} reached ${v.faults} distinct faulty slices: it takes no new objects; reads continue and repair rebuilds its faulty slices elsewhere. Check the disk; PUT /$/volumes/${v.id} {"isHealthy": true, "isReadOnly": false} declares it healthy again, or drain it.`,
  };
}

/** Key problems found at start: a key file missing or unusable, encrypted volumes that do not open. */
export function keyNotices(problem: string | null, locked: ReadonlyMap<number, { device: string; reason: string }>): Notification[] {
  const out: Notification[] = [];
  if (problem) out.push({ severity: 'critical', key: 'keys:file', title: 'Encryption key file problem', body: problem });
  for (const [id, l] of locked) {
    out.push({ severity: 'critical', key: `keys:locked:${id}`, title: `Encrypted volume ${id} is locked`, body: `Volume ${id} (${l.device}) does not open: ${l.reason}. It is not served (reads rebuild its slices from parity). Restore the key file, or recover with the passphrase (POST /$/encryption/recover).` });
  }
  return out;
}
