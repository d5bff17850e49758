import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { ActorError, type ActorErrorCode, type ActorSystem, type SupervisionEvent, type SystemOptions } from '../../runtime/system.js';
import { nextEvent, startSystem } from './system.js';

export const COURIER = new URL('../fixtures/courier/actor.js', import.meta.url).href;
export const FLAKY = new URL('../fixtures/flaky/actor.js', import.meta.url).href;

/** Everything each test system emitted (for messages when a wait fails). */
const journals = new WeakMap<ActorSystem, SupervisionEvent[]>();

/** One shared thread group: with groupThreads 1 (startTestSystem's default) all its actors share one thread. */
export const SHARED = { mode: 'shared', group: 'g' } as const;
export const DEDICATED = { mode: 'dedicated' } as const;

/**
 * startSystem with settings for a loaded machine: a worker thread costs ~0.4 s of CPU to start
 * and the tests of a file run at once on 2 cores, so one thread per shared group, and a request
 * deadline far above any wait a test means (tests that test deadlines pass their own).
 */
export async function startTestSystem(t: ExecutionContext, opts: Partial<SystemOptions> = {}): Promise<ActorSystem> {
  const system = await startSystem(t, { groupThreads: 1, requestTimeoutMs: 30_000, ...opts });
  journals.set(system, recordEvents(t, system));
  return system;
}

/** Fast restarts for tests. */
export const FAST_BACKOFF = { initialMs: 20, factor: 2, maxMs: 1000 };

/** A temporary directory removed after the test, pass or fail. */
export function tempDir(t: ExecutionContext, prefix = 'hostd-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * nextEvent with a deadline that allows for a loaded 2-core machine (many systems start at
 * once); on timeout the error names what was awaited and lists what the system did emit.
 */
export async function eventually<T extends SupervisionEvent['type']>(
  system: ActorSystem,
  type: T,
  pred: (e: Extract<SupervisionEvent, { type: T }>) => boolean = () => true,
  what = type,
): Promise<Extract<SupervisionEvent, { type: T }>> {
  try {
    return await nextEvent(system.events$, type, pred, 30_000);
  } catch (err) {
    const seen = (journals.get(system) ?? []).map((e) => `${e.type} ${'id' in e ? e.id : ''}${'attempt' in e ? ` #${e.attempt}` : ''}`);
    throw new Error(`no ${what} event: ${(err as Error).message}; events so far: ${seen.join(', ')}`);
  }
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

export type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/** Poll `check` until it returns a truthy value (returned) or `timeoutMs` passes (throws with `what`). */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 30_000, intervalMs = 10): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as Truthy<T>;
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

/** `p`, or a rejection naming `what` if it takes longer than `ms`. */
export async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
