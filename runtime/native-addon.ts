/**
 * Loading one of the project's native addons (native/*), or saying why not: a variable in the
 * environment set to '0' turns it off, a build that is missing or does not load (or fails the
 * caller's `check`) leaves it off with one process warning. The caller keeps the result for its
 * thread and falls back to its JavaScript path. (native/aes-gcm for the volume's cipher,
 * native/rtp-fastpath for the media bridge's packet path.)
 */
import { createRequire } from 'node:module';

export interface AddonLoad<T> {
  addon: T | null;
  /** Why it is not in use ('' when it is). */
  unavailable: string;
}

export interface AddonSpec<T> {
  /** The .node file (a URL made from the caller's import.meta.url). */
  file: URL;
  /** The variable that turns it off when set to '0'. */
  offEnv: string;
  /** What to run to build it, said after a load failure. */
  build: string;
  /** A reason the loaded addon cannot be used (a layout mismatch), or null. Runs before `ready`. */
  check?(loaded: T): string | null;
  /** Once the addon is accepted (e.g. a callback registered with it). */
  ready?(loaded: T): void;
  /** The warning emitted when it cannot be used, from the reason. */
  warning(reason: string): string;
  warningType: string;
}

export function loadAddon<T>(spec: AddonSpec<T>): AddonLoad<T> {
  if (process.env[spec.offEnv] === '0') return { addon: null, unavailable: `${spec.offEnv}=0` };
  let reason: string;
  try {
    const loaded = createRequire(import.meta.url)(spec.file.pathname) as T;
    const mismatch = spec.check?.(loaded) ?? null;
    if (!mismatch) {
      spec.ready?.(loaded);
      return { addon: loaded, unavailable: '' };
    }
    reason = `${mismatch}: rebuild it (${spec.build})`;
  } catch (err) {
    reason = `${(err as Error).message.split('\n')[0]} (build it: ${spec.build})`;
  }
  process.emitWarning(spec.warning(reason), spec.warningType);
  return { addon: null, unavailable: reason };
}
