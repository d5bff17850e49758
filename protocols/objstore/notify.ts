/**
 * Notifications of the object store, their pure rules: the severities and the check of a
 * `POST /$/notify/test` body, the dedup decision (a key seen within the cooldown is suppressed
 * unless its severity is higher than the one last sent), and the chat webhook's JSON body (one
 * `text` field, which Slack, Mattermost and Google Chat all read). No I/O, no clock: callers pass
 * `now`. The conditions that raise notifications, and the sending, are in actors/objstore/notify.ts.
 */

export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export interface Notification {
  severity: Severity;
  title: string;
  body: string;
  /** notifications with the same key within the cooldown are one (a higher severity passes) */
  key: string;
}

/** A key's last delivery: when, and at which severity. */
export interface Sent {
  at: number;
  severity: Severity;
}

/** Five minutes: a condition that persists is told again at most this often. */
export const DEFAULT_NOTIFY_COOLDOWN_MS = 5 * 60_000;

export const MAX_TITLE_CHARS = 200;
export const MAX_BODY_CHARS = 4000;

export function rank(s: Severity): number {
  return SEVERITIES.indexOf(s);
}

/** Send a notification with this key now? Not when the same key went out within the cooldown at the same or a higher severity. */
export function shouldSend(last: Sent | undefined, severity: Severity, now: number, cooldownMs: number): boolean {
  if (!last) return true;
  if (rank(severity) > rank(last.severity)) return true;
  return now - last.at >= cooldownMs;
}

export class NotifyInputError extends Error {
  constructor(
    readonly code: 'INVALID_SEVERITY' | 'INVALID_FIELD' | 'UNKNOWN_FIELD',
    message: string,
  ) {
    super(message);
  }
}

/**
 * The body of `POST /$/notify/test`: `severity` one of info, warning, critical (default warning),
 * `title` and `body` strings (defaults say it is a test); any other field is refused (a typo must
 * not pass silently).
 */
export function parseTestNotification(body: Record<string, unknown>): { severity: Severity; title: string; body: string } {
  const unknown = Object.keys(body).filter((k) => k !== 'severity' && k !== 'title' && k !== 'body');
  if (unknown.length) throw new NotifyInputError('UNKNOWN_FIELD', `unknown field(s): ${unknown.join(', ')} (allowed: severity, title, body)`);
  const sev = body.severity ?? 'warning';
  if (typeof sev !== 'string' || !(SEVERITIES as readonly string[]).includes(sev)) {
    throw new NotifyInputError('INVALID_SEVERITY', `severity must be one of ${SEVERITIES.join(', ')}; got ${JSON.stringify(sev)}`);
  }
  const text = (k: 'title' | 'body', dflt: string, max: number): string => {
    const v = body[k] ?? dflt;
    if (typeof v !== 'string') throw new NotifyInputError('INVALID_FIELD', `${k} must be a string`);
    if (v.length > max) throw new NotifyInputError('INVALID_FIELD', `${k} is ${v.length} characters; at most ${max}`);
    return v;
  };
  return {
    severity: sev as Severity,
    title: text('title', 'Test notification', MAX_TITLE_CHARS),
    body: text('body', 'Sent by POST /$/notify/test: the object store can reach this channel.', MAX_BODY_CHARS),
  };
}

const MARK: Record<Severity, string> = { info: '[info]', warning: '[WARNING]', critical: '[CRITICAL]' };

/**
 * The webhook's JSON body: `{text}` with the severity, the title in bold (`*...*` is bold in
 * Slack and Google Chat, italic in Mattermost: readable in all three), the host and the body.
 */
export function webhookBody(n: Pick<Notification, 'severity' | 'title' | 'body'>, host: string): { text: string } {
  return { text: `${MARK[n.severity]} *${n.title}* (objstore on ${host})\n${n.body}` };
}
