import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { ActorError, type ActorErrorCode, type ActorSystem, type SupervisionEvent } from '../../runtime/index.js';

export const COURIER = new URL('../fixtures/courier/actor.js', import.meta.url).href;
export const FLAKY = new URL('../fixtures/flaky/actor.js', import.meta.url).href;

/** Fast restarts for tests. */
export const FAST_BACKOFF = { initialMs: 20, factor: 2, maxMs: 1000 };

/** A temporary directory removed after the test, pass or fail. */
export function tempDir(t: ExecutionContext, prefix = 'hostd-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Every supervision event of `system` from now on, in order (unsubscribed after the test). */
export function recordEvents(t: ExecutionContext, system: ActorSystem): SupervisionEvent[] {
  const out: SupervisionEvent[] = [];
  const sub = system.events$.subscribe((e) => out.push(e));
  t.teardown(() => sub.unsubscribe());
  return out;
}

export function ofType<T extends SupervisionEvent['type']>(events: readonly SupervisionEvent[], type: T, id?: string): Array<Extract<SupervisionEvent, { type: T }>> {
  return events.filter((e): e is Extract<SupervisionEvent, { type: T }> => e.type === type && (id === undefined || ('id' in e ? e.id === id : 'supervisor' in e && e.supervisor === id)));
}

/** Poll `check` until it returns a truthy value (returned) or `timeoutMs` passes (throws with `what`). */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 10_000, intervalMs = 10): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Assert that `p` rejects with an ActorError of `code`; returns the error. */
export async function rejectsWith(t: ExecutionContext, p: Promise<unknown>, code: ActorErrorCode): Promise<ActorError> {
  const err = await t.throwsAsync(p, { instanceOf: ActorError });
  t.is(err?.code, code, `expected ${code}, got ${err?.code}: ${err?.message}`);
  return err as ActorError;
}

export function sum(bytes: number, value: number): number {
  return bytes * value;
}
