import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filter, firstValueFrom, timeout, type Observable } from 'rxjs';
import { ActorSystem, type SupervisionEvent, type SystemOptions } from '../../runtime/system.js';
import type { Scope } from './scope.js';

export const PROBE = new URL('../fixtures/probe/actor.js', import.meta.url).href;

/** A fresh actor system on a temporary state directory; shut down and removed after the test. */
export async function startSystem(t: Scope, opts: Partial<SystemOptions> = {}): Promise<ActorSystem> {
  const stateDir = opts.stateDir ?? mkdtempSync(join(tmpdir(), 'hostd-test-'));
  const system = await ActorSystem.start({ logLevel: 'silent', groupThreads: 2, poolThreads: 1, ...opts, stateDir });
  t.teardown(async () => {
    await system.shutdown();
    if (!opts.stateDir) rmSync(stateDir, { recursive: true, force: true });
  });
  return system;
}

export function nextEvent<T extends SupervisionEvent['type']>(
  events$: Observable<SupervisionEvent>,
  type: T,
  pred: (e: Extract<SupervisionEvent, { type: T }>) => boolean = () => true,
  ms = 10_000,
): Promise<Extract<SupervisionEvent, { type: T }>> {
  return firstValueFrom(
    events$.pipe(
      filter((e): e is Extract<SupervisionEvent, { type: T }> => e.type === type && pred(e as never)),
      timeout(ms),
    ),
  );
}
