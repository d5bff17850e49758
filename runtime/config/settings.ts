/**
 * Settings from flags and environment, validated. Each setting has one environment variable
 * and one flag; a flag wins over the environment, the environment over the default. Every bad
 * value is reported, by name, before anything starts.
 */

export interface Setting<T> {
  /** Environment variable, e.g. HOSTD_METRICS_PORT. */
  env: string;
  /** Long flag without dashes, e.g. metrics-port. */
  flag: string;
  description: string;
  /** What a valid value looks like, for messages and --help. */
  expect: string;
  default: T | (() => T);
  /** Parse a raw string; return undefined (or throw an Error saying why) when it is not valid. */
  parse(raw: string): T | undefined;
  /** Render the default for --help. */
  show?(v: T): string;
  /** A switch: `--flag` alone means true; false is set through the environment variable. */
  boolean?: boolean;
}

export type Schema = Record<string, Setting<unknown>>;
export type Values<S extends Schema> = { [K in keyof S]: S[K] extends Setting<infer T> ? T : never };

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(problems.length === 1 ? problems[0]! : `${problems.length} invalid settings:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export function int(o: { env: string; flag: string; description: string; min: number; max: number; default: number | (() => number) }): Setting<number> {
  return {
    ...o,
    expect: `an integer from ${o.min} to ${o.max}`,
    parse(raw) {
      if (!/^-?\d+$/.test(raw.trim())) return undefined;
      const n = Number(raw.trim());
      return Number.isSafeInteger(n) && n >= o.min && n <= o.max ? n : undefined;
    },
  };
}

export function oneOf<T extends string>(o: { env: string; flag: string; description: string; values: readonly T[]; default: T }): Setting<T> {
  return {
    ...o,
    expect: `one of ${o.values.join(', ')}`,
    parse: (raw) => (o.values.includes(raw as T) ? (raw as T) : undefined),
  };
}

export function str(o: { env: string; flag: string; description: string; expect?: string; default: string; valid?(v: string): boolean }): Setting<string> {
  return {
    ...o,
    expect: o.expect ?? 'a non-empty string',
    parse: (raw) => (raw.length > 0 && (o.valid?.(raw) ?? true) ? raw : undefined),
  };
}

export function list<T extends string>(o: { env: string; flag: string; description: string; values: readonly T[]; default: T[] | (() => T[]) }): Setting<T[]> {
  return {
    ...o,
    expect: `a comma-separated list of ${o.values.join(', ')}`,
    parse(raw) {
      const items = raw.split(',').map((s) => s.trim()).filter(Boolean);
      const unknown = items.filter((i) => !o.values.includes(i as T));
      if (unknown.length) throw new Error(`unknown: ${unknown.join(', ')}`);
      if (!items.length) return undefined;
      return [...new Set(items)] as T[];
    },
    show: (v) => (v.length ? v.join(',') : '(none)'),
  };
}

export function bool(o: { env: string; flag: string; description: string; default: boolean }): Setting<boolean> {
  return {
    ...o,
    boolean: true,
    expect: 'true or false',
    parse: (raw) => (['true', '1', 'yes'].includes(raw) ? true : ['false', '0', 'no'].includes(raw) ? false : undefined),
  };
}

/**
 * Resolve every setting of `schema`. `flags` holds raw flag values by flag name (as from
 * util.parseArgs). Throws ConfigError naming every bad setting.
 */
export function resolve<S extends Schema>(schema: S, flags: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv = process.env): Values<S> {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, s] of Object.entries(schema)) {
    const f = flags[s.flag];
    const fromFlag = typeof f === 'boolean' ? String(f) : f;
    const raw = fromFlag ?? env[s.env];
    if (raw === undefined || (fromFlag === undefined && raw === '')) {
      out[key] = typeof s.default === 'function' ? (s.default as () => unknown)() : s.default;
      continue;
    }
    let v: unknown;
    let why = '';
    try {
      v = s.parse(raw);
    } catch (err) {
      why = ` (${(err as Error).message})`;
    }
    if (v === undefined) {
      const source = fromFlag !== undefined ? `--${s.flag}` : s.env;
      problems.push(`invalid setting ${source} (${fromFlag !== undefined ? s.env : `--${s.flag}`}): expected ${s.expect}, got ${JSON.stringify(raw)}${why}`);
    } else out[key] = v;
  }
  if (problems.length) throw new ConfigError(problems);
  return out as Values<S>;
}

/** The settings of a schema as --help lines. */
export function describe(schema: Schema): string {
  const rows = Object.values(schema).map((s) => {
    const d = typeof s.default === 'function' ? (s.default as () => unknown)() : s.default;
    const shown = s.show ? s.show(d as never) : String(d);
    const head = `  --${s.flag}${s.boolean ? '' : ' <v>'}`;
    const lead = head.length < 30 ? head.padEnd(30) : `${head}\n${' '.repeat(30)}`;
    return lead + `${s.description}\n` + ' '.repeat(30) + `env ${s.env}; ${s.expect}; default ${shown}`;
  });
  return rows.join('\n');
}
