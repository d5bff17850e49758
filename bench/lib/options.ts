/** Option values the benches parse the same way. */

/** `--name 20,50,100` as positive integers; `none` or empty: no value. Throws naming the option. */
export function positiveIntList(s: string, name: string): number[] {
  if (s === '' || s === 'none') return [];
  const l = s.split(',').map(Number);
  if (l.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--${name}: a comma-separated list of positive integers, got ${s}`);
  return l;
}
