/**
 * SDES rekey on the receive side: a dual-context transition (spec rule 10). After rekey the new
 * context is tried first; a packet the new key does not authenticate is tried with the old one
 * until `retireAt`. Time is passed in (pure module, no clock).
 *
 * Decisions:
 * - The old context is dropped by the first call with nowMs ≥ retireAt, whatever the packet and
 *   on the SRTP or SRTCP path alike, or by expire(nowMs); so an idle or RTCP-only transition
 *   still retires it, and a snapshot taken after that carries no old key.
 * - Only an 'auth' failure of the new context falls back to the old one; 'replay', 'too-old',
 *   'ssrc-limit' and 'malformed' from the new context are final. If the old context also fails,
 *   its verdict is returned ('auth' if it did not authenticate either).
 * - A rekey during a transition retires the older of the two old contexts at once: at most two
 *   keys are live.
 */
import { SrtpReceiveContext, type SrtpFailure, type SrtpReceiveState } from './context.js';

export const DEFAULT_REKEY_GRACE_MS = 5000;

export interface SrtpReceiverState {
  current: SrtpReceiveState;
  previous: SrtpReceiveState | null;
  retireAt: number | null;
}

export class SrtpReceiver {
  private cur: SrtpReceiveContext;
  private prev: SrtpReceiveContext | null = null;
  private retireAt = 0;

  constructor(current: SrtpReceiveContext) {
    this.cur = current;
  }

  /** The context of the newest key. */
  get current(): SrtpReceiveContext {
    return this.cur;
  }

  rekey(next: SrtpReceiveContext, nowMs: number, graceMs: number = DEFAULT_REKEY_GRACE_MS): void {
    this.prev = this.cur;
    this.cur = next;
    this.retireAt = nowMs + graceMs;
  }

  /** Drops the old context if its time is up; true while an old context is still kept. */
  expire(nowMs: number): boolean {
    if (this.prev !== null && nowMs >= this.retireAt) this.prev = null;
    return this.prev !== null;
  }

  unprotectRtp(packet: Uint8Array, nowMs: number): Buffer | SrtpFailure {
    const old = this.expire(nowMs) ? this.prev : null;
    const r = this.cur.unprotectRtp(packet);
    return r === 'auth' && old !== null ? old.unprotectRtp(packet) : r;
  }

  unprotectRtcp(packet: Uint8Array, nowMs: number): Buffer | SrtpFailure {
    const old = this.expire(nowMs) ? this.prev : null;
    const r = this.cur.unprotectRtcp(packet);
    return r === 'auth' && old !== null ? old.unprotectRtcp(packet) : r;
  }

  /** Resets sequence and replay state of every live key (reinvite of resumed streams). */
  resetReplay(): void {
    this.cur.resetReplay();
    this.prev?.resetReplay();
  }

  snapshot(): SrtpReceiverState {
    return {
      current: this.cur.snapshot(),
      previous: this.prev?.snapshot() ?? null,
      retireAt: this.prev === null ? null : this.retireAt,
    };
  }

  static restore(s: SrtpReceiverState): SrtpReceiver {
    const r = new SrtpReceiver(SrtpReceiveContext.restore(s.current));
    if (s.previous !== null && s.retireAt !== null) {
      r.prev = SrtpReceiveContext.restore(s.previous);
      r.retireAt = s.retireAt;
    }
    return r;
  }
}
