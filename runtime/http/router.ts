/**
 * Route tables for uWebSockets.js fronts. A front declares `[{ method, path, handle }]`, where
 * `path` is a pattern of segments: a literal (`volumes`), a named parameter (`:id`, exactly one
 * non-empty segment) or, last only, `*` (the rest of the path, possibly empty). The router only
 * matches: what a handler receives and how a front answers "not found" (404) and "method not
 * allowed" (405 with `Allow`) are the front's; this module knows no service.
 *
 * Matching is on the raw path as uWS gives it (`req.getUrl()`, no query): segments are split at
 * '/', before any decoding, so an encoded '/' (%2F) stays inside its segment; literals match only
 * as written (`st%61tus` is not `status`); parameters are handed over raw, still percent-encoded
 * (decodeParam decodes one). A trailing slash is a segment of its own, so `/a/` is not `/a` and a
 * `:param` never matches the empty segment after it. Methods are compared upper-case; HEAD is
 * not GET unless a table says so.
 */

/** Methods a table may name. */
export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'OPTIONS' | 'PATCH';

/** The parameters of a pattern, by name: `'/v/:id/drain'` gives `{ id: string }`, `'/f/*'` gives `{ '*': string }`. */
export type PathParams<P extends string> = P extends `${infer Head}/${infer Tail}` ? SegmentParam<Head> & PathParams<Tail> : SegmentParam<P>;
type SegmentParam<S extends string> = S extends `:${infer Name}` ? { [K in Name]: string } : S extends '*' ? { '*': string } : unknown;

export type Params = Readonly<Record<string, string>>;

/** One entry of a route table. C is what the front hands every handler (its request, its reply...). */
export interface Route<C, R = unknown> {
  readonly method: Method;
  readonly path: string;
  readonly handle: (call: C, params: Params) => R;
}

/**
 * The typed way to write a table entry: `const route = routeFor<Call>()`, then
 * `route('GET', '/$/volumes/:id', (call, { id }) => ...)` checks the handler's parameter names
 * against the pattern.
 */
export function routeFor<C, R = unknown>() {
  return <P extends string>(method: Method, path: P, handle: (call: C, params: PathParams<P>) => R): Route<C, R> => ({
    method,
    path,
    handle: handle as (call: C, params: Params) => R,
  });
}

export type Match<C, R = unknown> =
  | { readonly kind: 'found'; readonly route: Route<C, R>; readonly params: Params }
  /** The path is known, not with this method: `allow` lists the methods it has, in table order. */
  | { readonly kind: 'method-not-allowed'; readonly path: string; readonly allow: readonly Method[] }
  | { readonly kind: 'not-found' };

type Segment = { kind: 'literal'; text: string } | { kind: 'param'; name: string } | { kind: 'rest' };

interface Compiled<C, R> {
  route: Route<C, R>;
  segments: Segment[];
}

function compile(path: string): Segment[] {
  if (!path.startsWith('/')) throw new Error(`route pattern ${JSON.stringify(path)} must begin with /`);
  const parts = path.slice(1).split('/');
  return parts.map((p, i): Segment => {
    if (p === '*') {
      if (i !== parts.length - 1) throw new Error(`route pattern ${JSON.stringify(path)}: * must be the last segment`);
      return { kind: 'rest' };
    }
    if (p.startsWith(':')) {
      if (p.length === 1) throw new Error(`route pattern ${JSON.stringify(path)}: a parameter needs a name`);
      return { kind: 'param', name: p.slice(1) };
    }
    return { kind: 'literal', text: p };
  });
}

/** The parameters of `path` under `segments`, or null when it does not match. */
function matchSegments(segments: readonly Segment[], parts: readonly string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    if (seg.kind === 'rest') {
      if (parts.length <= i) return null;
      params['*'] = parts.slice(i).join('/');
      return params;
    }
    const part = parts[i];
    if (part === undefined) return null;
    if (seg.kind === 'literal') {
      if (part !== seg.text) return null;
    } else {
      if (part === '') return null;
      params[seg.name] = part;
    }
  }
  return parts.length === segments.length ? params : null;
}

export class Router<C, R = unknown> {
  private readonly table: Compiled<C, R>[];

  constructor(routes: readonly Route<C, R>[]) {
    const seen = new Set<string>();
    this.table = routes.map((route) => {
      const key = `${route.method} ${route.path}`;
      if (seen.has(key)) throw new Error(`route ${key} is declared twice`);
      seen.add(key);
      return { route, segments: compile(route.path) };
    });
  }

  /**
   * The route for `method` on `path`: the first in table order whose pattern matches the path
   * and whose method is `method`. When patterns match the path but none with this method, the
   * path is known: the answer lists the methods they have (in table order) and the first such
   * pattern.
   */
  match(method: string, path: string): Match<C, R> {
    if (!path.startsWith('/')) return { kind: 'not-found' };
    const parts = path.slice(1).split('/');
    const m = method.toUpperCase();
    let known: { path: string; allow: Method[] } | null = null;
    for (const { route, segments } of this.table) {
      const params = matchSegments(segments, parts);
      if (!params) continue;
      if (route.method === m) return { kind: 'found', route, params };
      known ??= { path: route.path, allow: [] };
      if (!known.allow.includes(route.method)) known.allow.push(route.method);
    }
    return known ? { kind: 'method-not-allowed', path: known.path, allow: known.allow } : { kind: 'not-found' };
  }
}

/** A raw parameter decoded (percent-encoding), or null when its encoding is not valid. */
export function decodeParam(raw: string): string | null {
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}
