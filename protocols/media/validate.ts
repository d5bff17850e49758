/**
 * A small parameter checker for commands: each field rule either yields the typed value or
 * the message that names what is wrong (`direction must be one of sendrecv, …; got "up"`).
 * Unknown fields are refused too, so a misspelt optional parameter never passes silently
 * (own keys only: `toString` or `__proto__` in params are unknown fields, not Object.prototype's).
 */

export type Check<T> = (value: unknown, name: string) => { ok: true; value: T } | { ok: false; error: string };

type Shape = Record<string, Check<unknown>>;
export type ParamsOf<S extends Shape> = { [K in keyof S]: S[K] extends Check<infer T> ? T : never };

export function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}

const ok = <T>(value: T) => ({ ok: true as const, value });
const bad = (error: string) => ({ ok: false as const, error });

export function required<T>(check: Check<T>): Check<T> {
  return (v, name) => (v === undefined ? bad(`${name} is required`) : check(v, name));
}

export function optional<T, D extends T | undefined>(check: Check<T>, fallback: D): Check<T | D> {
  return (v, name) => (v === undefined ? ok(fallback) : check(v, name));
}

export function nullable<T>(check: Check<T>): Check<T | null> {
  return (v, name) => (v === null ? ok(null) : check(v, name));
}

export const string = (o: { min?: number; max?: number } = {}): Check<string> => (v, name) => {
  if (typeof v !== 'string') return bad(`${name} must be a string; got ${describe(v)}`);
  if (o.min !== undefined && v.length < o.min) return bad(`${name} must not be empty`);
  if (o.max !== undefined && v.length > o.max) return bad(`${name} is longer than ${o.max} characters`);
  return ok(v);
};

export const boolean: Check<boolean> = (v, name) => (typeof v === 'boolean' ? ok(v) : bad(`${name} must be true or false; got ${describe(v)}`));

export const number = (o: { min: number; max: number; integer?: boolean; unit?: string }): Check<number> => (v, name) => {
  if (typeof v !== 'number' || !Number.isFinite(v)) return bad(`${name} must be a number; got ${describe(v)}`);
  if (o.integer && !Number.isInteger(v)) return bad(`${name} must be an integer; got ${v}`);
  const unit = o.unit ? ` ${o.unit}` : '';
  if (v < o.min || v > o.max) return bad(`${name} must be between ${o.min} and ${o.max}${unit}; got ${v}`);
  return ok(v);
};

export function oneOf<T extends string>(values: readonly T[]): Check<T> {
  return (v, name) =>
    typeof v === 'string' && (values as readonly string[]).includes(v) ? ok(v as T) : bad(`${name} must be one of ${values.join(', ')}; got ${describe(v)}`);
}

export function oneOfNumbers<T extends number>(values: readonly T[]): Check<T> {
  return (v, name) => (typeof v === 'number' && (values as readonly number[]).includes(v) ? ok(v as T) : bad(`${name} must be one of ${values.join(', ')}; got ${describe(v)}`));
}

export function arrayOf<T>(item: Check<T>, o: { min?: number; max?: number; unique?: boolean } = {}): Check<T[]> {
  return (v, name) => {
    if (!Array.isArray(v)) return bad(`${name} must be an array; got ${describe(v)}`);
    if (o.min !== undefined && v.length < o.min) return bad(`${name} must have at least ${o.min} item${o.min === 1 ? '' : 's'}`);
    if (o.max !== undefined && v.length > o.max) return bad(`${name} must have at most ${o.max} items`);
    const out: T[] = [];
    for (let i = 0; i < v.length; i++) {
      const r = item(v[i], `${name}[${i}]`);
      if (!r.ok) return r;
      if (o.unique && out.includes(r.value)) return bad(`${name} lists ${describe(r.value)} twice`);
      out.push(r.value);
    }
    return ok(out);
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const uuid: Check<string> = (v, name) =>
  typeof v === 'string' && UUID.test(v) ? ok(v.toLowerCase()) : bad(`${name} must be a session UUID; got ${describe(v)}`);

/** Check every field of `params` against `shape`; refuse fields the shape does not name. */
export function checkParams<S extends Shape>(shape: S, params: Record<string, unknown>): { ok: true; value: ParamsOf<S> } | { ok: false; error: string } {
  for (const key of Object.keys(params)) {
    if (!Object.hasOwn(shape, key)) {
      const known = Object.keys(shape);
      return bad(`unknown parameter ${key}${known.length ? ` (this command takes ${known.join(', ')})` : ' (this command takes none)'}`);
    }
  }
  const out: Record<string, unknown> = {};
  for (const [key, check] of Object.entries(shape)) {
    const r = check(params[key], key);
    if (!r.ok) return r;
    out[key] = r.value;
  }
  return ok(out as ParamsOf<S>);
}
