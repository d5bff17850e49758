/**
 * The deployment event stream (`GET /api/deployments/{id}/events`) as text: framing of
 * text/event-stream, and what a subscriber is sent when it connects.
 *
 * Every event a deployment emits (status.ts) is appended to its log with a sequence number
 * 1, 2, 3…; the number is the frame's `id:`. A new subscriber gets the snapshot: one `target` frame
 * per target with its current state, then the `status` frame, all carrying the id of the last
 * logged event (the state they describe), so a reconnect resumes exactly after it. A terminal
 * deployment gets the snapshot and is closed (the status frame is its one final parent event);
 * a running one is kept open for live events, each sent only if its seq is above the last sent
 * (the front subscribes before reading the snapshot, so nothing falls between the two), and closed
 * after the terminal status event. A reconnect with a valid `Last-Event-ID` (0 ≤ n ≤ last seq)
 * gets only the events after n instead of the snapshot; when nothing is missed and the deployment
 * is terminal the answer is 204 No Content, which tells EventSource to stop reconnecting. Any other
 * Last-Event-ID (not a number, ahead of the log) is ignored and the snapshot is sent. Heartbeats
 * (`heartbeat`, data `{}`) repeat the last sent id. Pure.
 */
import { isTerminal, targetView, type DeploymentEvent, type DeploymentState } from './status.js';

export interface SseFrame {
  id?: string;
  event?: string;
  /** split into one `data:` line per line */
  data: string;
  /** reconnection delay in ms */
  retry?: number;
}

/** One frame of text/event-stream: `id:`, `event:`, `retry:`, one `data:` line per line of data, a blank line. */
export function formatFrame(f: SseFrame): string {
  let out = '';
  if (f.id !== undefined) {
    if (/[\r\n\u0000]/.test(f.id)) throw new TypeError('an SSE id must not contain CR, LF or NUL');
    out += `id: ${f.id}\n`;
  }
  if (f.event !== undefined) {
    if (f.event === '' || /[\r\n]/.test(f.event)) throw new TypeError('an SSE event name must be one non-empty line');
    out += `event: ${f.event}\n`;
  }
  if (f.retry !== undefined) {
    if (!Number.isInteger(f.retry) || f.retry < 0) throw new TypeError('SSE retry must be a whole number of ms');
    out += `retry: ${f.retry}\n`;
  }
  for (const line of f.data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}

export interface LoggedEvent {
  seq: number;
  event: DeploymentEvent;
}

export function eventFrame(seq: number, e: DeploymentEvent): string {
  return formatFrame({ id: String(seq), event: e.event, data: JSON.stringify(e.data) });
}

export function heartbeatFrame(lastSentSeq: number): string {
  return formatFrame({ id: String(lastSentSeq), event: 'heartbeat', data: '{}' });
}

/** The current state as events: every target, then the parent status. */
export function snapshotEvents(d: DeploymentState): DeploymentEvent[] {
  return [...d.targets.map((t): DeploymentEvent => ({ event: 'target', data: { target: targetView(t) } })), { event: 'status', data: { status: d.status, message: d.message } }];
}

/** A Last-Event-ID header as a seq, or null when absent or not a plain decimal number. */
export function parseLastEventId(header: string | undefined | null): number | null {
  if (header === undefined || header === null) return null;
  const s = header.trim();
  if (!/^(0|[1-9]\d{0,15})$/.test(s)) return null;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : null;
}

export type StreamPlan =
  /** write the frames, then keep the stream open for live events above `lastSeq`, or close it */
  | { kind: 'stream'; frames: string[]; lastSeq: number; then: 'live' | 'close' }
  /** terminal and nothing missed: answer 204 so the client stops reconnecting */
  | { kind: 'no-content' };

/**
 * What to send a subscriber: `d` is the deployment's current state and `log` its whole event log
 * in seq order, both read together (one snapshot of the store).
 */
export function openStream(d: DeploymentState, log: readonly LoggedEvent[], lastEventId?: string | null): StreamPlan {
  const lastSeq = log.length === 0 ? 0 : (log[log.length - 1] as LoggedEvent).seq;
  const done = isTerminal(d.status);
  const from = parseLastEventId(lastEventId);
  if (from !== null && from <= lastSeq) {
    const missed = log.filter((e) => e.seq > from);
    if (missed.length === 0 && done) return { kind: 'no-content' };
    return { kind: 'stream', frames: missed.map((e) => eventFrame(e.seq, e.event)), lastSeq, then: done ? 'close' : 'live' };
  }
  return { kind: 'stream', frames: snapshotEvents(d).map((e) => eventFrame(lastSeq, e)), lastSeq, then: done ? 'close' : 'live' };
}

/**
 * A live event for a subscriber that has sent everything up to `lastSentSeq`: the frame to write
 * (null for an event it already has), and whether to close after it (a terminal status).
 */
export function liveStep(lastSentSeq: number, e: LoggedEvent): { frame: string | null; lastSentSeq: number; close: boolean } {
  if (e.seq <= lastSentSeq) return { frame: null, lastSentSeq, close: false };
  const close = e.event.event === 'status' && isTerminal(e.event.data.status);
  return { frame: eventFrame(e.seq, e.event), lastSentSeq: e.seq, close };
}
