/**
 * Load generators shared by the main thread and the echo actor (which runs them inside a
 * worker thread for the worker->worker scenarios). They only need a way to ask and to tell,
 * so the same loop drives an ActorRef and the raw MessagePort baseline alike.
 */
import { performance } from 'node:perf_hooks';
import { summarize } from './stats.js';

export interface RequestLoad {
  /** Requests to complete. */
  count: number;
  /** Requests outstanding at once. */
  window: number;
  /** Bytes of an ArrayBuffer carried by every request (0: none). */
  payloadBytes: number;
  /** true: the buffer is moved (transfer list) and comes back moved in the reply; false: copied. */
  transfer: boolean;
}

export interface LoadResult {
  n: number;
  elapsedMs: number;
  perSec: number;
  /** Per-request round-trip time, µs. */
  p50Us: number;
  p99Us: number;
  maxUs: number;
  /** Requests whose transferred buffer was not detached on the sender side (should be 0). */
  notDetached: number;
}

/** The echo request on the wire: shared by the actor protocol and the raw baseline. */
export interface EchoRequest {
  type: 'echo';
  data?: ArrayBuffer;
  /** Reply with the buffer itself, moved back (transfer mode); otherwise reply its byte length. */
  back?: boolean;
}

export type Ask = (msg: EchoRequest, transfer: ArrayBuffer[]) => Promise<unknown>;

/**
 * `window` lanes, each issuing requests one after the other until `count` are done. With a
 * payload, each lane owns one buffer: in transfer mode it is moved to the target and moved
 * back in the reply (zero-copy both ways); in copy mode it is copied to the target, which
 * answers with its length (the sender keeps its own).
 */
export async function requestLoop(ask: Ask, load: RequestLoad): Promise<LoadResult> {
  const { count, payloadBytes, transfer } = load;
  const window = Math.max(1, Math.min(load.window, count));
  const rtt = new Float64Array(count);
  let issued = 0;
  let done = 0;
  let notDetached = 0;
  const lane = async (): Promise<void> => {
    let buf: ArrayBuffer | null = payloadBytes > 0 ? new ArrayBuffer(payloadBytes) : null;
    while (issued < count) {
      const i = issued++;
      const t0 = performance.now();
      let reply: unknown;
      if (!buf) reply = await ask({ type: 'echo' }, []);
      else if (transfer) {
        const p = ask({ type: 'echo', data: buf, back: true }, [buf]);
        if (buf.byteLength !== 0) notDetached++;
        reply = await p;
        if (!(reply instanceof ArrayBuffer) || reply.byteLength !== payloadBytes) throw new Error(`echo: expected the ${payloadBytes}-byte buffer back, got ${describe(reply)}`);
        buf = reply;
      } else {
        reply = await ask({ type: 'echo', data: buf }, []);
        if (reply !== payloadBytes) throw new Error(`echo: expected length ${payloadBytes}, got ${describe(reply)}`);
      }
      rtt[i] = (performance.now() - t0) * 1000;
      done++;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: window }, lane));
  const elapsedMs = performance.now() - t0;
  const s = summarize(rtt.subarray(0, done));
  return { n: done, elapsedMs, perSec: (done / elapsedMs) * 1000, p50Us: s.p50, p99Us: s.p99, maxUs: s.max, notDetached };
}

export interface CastLoad {
  /** Casts to send. */
  count: number;
  /**
   * Casts sent back to back before waiting for the target to catch up (a `count` request,
   * which queues behind them). Keeps the target's mailbox below its capacity; 0 = no pause.
   */
  burst: number;
}

export interface CastResult {
  sent: number;
  /** Casts the target counted (sent minus dropped). */
  delivered: number;
  elapsedMs: number;
  perSec: number;
}

/**
 * Fire-and-forget throughput: `count` casts, then a request that queues behind them in the
 * target's mailbox; the time runs until its reply. `counter()` returns the target's tally.
 */
export async function castLoop(tell: () => void, counter: () => Promise<number>, load: CastLoad): Promise<CastResult> {
  const before = await counter();
  const burst = load.burst > 0 ? load.burst : load.count;
  const t0 = performance.now();
  let sent = 0;
  while (sent < load.count) {
    const n = Math.min(burst, load.count - sent);
    for (let i = 0; i < n; i++) tell();
    sent += n;
    if (sent < load.count) await counter();
  }
  const after = await counter();
  const elapsedMs = performance.now() - t0;
  return { sent, delivered: after - before, elapsedMs, perSec: (sent / elapsedMs) * 1000 };
}

function describe(v: unknown): string {
  if (v instanceof ArrayBuffer) return `ArrayBuffer(${v.byteLength})`;
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}
