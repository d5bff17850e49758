/** Unwrapping validator results in tests: the value of an accepted one, the refusal of a refused one. */
import type { Refusal, Result } from '../../protocols/deploy/errors.js';

export function accepted<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(`refused: ${r.error.message}`);
  return r.value;
}

export function refused<T>(r: Result<T>): Refusal {
  if (r.ok) throw new Error(`expected a refusal, got ${JSON.stringify(r.value)}`);
  return r.error;
}
