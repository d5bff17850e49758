/**
 * Application routes: which control connection owns an incoming call. A connection registers
 * a set of routes (`route.register` replaces its set); a route is `exact` (the user part of
 * the Request-URI equals the value) or `userPrefix` (the user part starts with it). A route
 * (match + value) held by another connection is a conflict. Lookup: an exact route first, else
 * the longest matching prefix (overlapping prefixes of different connections are allowed; the
 * longest wins, so a more specific application can take part of a range). Pure.
 */

export type RouteMatch = 'exact' | 'userPrefix';

export interface Route {
  match: RouteMatch;
  value: string;
}

const key = (r: Route) => `${r.match}\u0000${r.value}`;

export type RegisterResult = { ok: true } | { ok: false; route: Route; owner: string };

export class RouteTable {
  private readonly byKey = new Map<string, { route: Route; owner: string }>();
  private readonly byOwner = new Map<string, Route[]>();

  /** Replace `owner`'s routes with `routes` (an empty list clears them); nothing changes on a conflict. */
  register(owner: string, routes: readonly Route[]): RegisterResult {
    for (const r of routes) {
      const held = this.byKey.get(key(r));
      if (held && held.owner !== owner) return { ok: false, route: r, owner: held.owner };
    }
    this.release(owner);
    const unique = new Map(routes.map((r) => [key(r), { match: r.match, value: r.value }]));
    for (const [k, r] of unique) this.byKey.set(k, { route: r, owner });
    if (unique.size) this.byOwner.set(owner, [...unique.values()]);
    return { ok: true };
  }

  /** Drop every route of `owner` (its connection closed). */
  release(owner: string): void {
    for (const r of this.byOwner.get(owner) ?? []) this.byKey.delete(key(r));
    this.byOwner.delete(owner);
  }

  routesOf(owner: string): Route[] {
    return [...(this.byOwner.get(owner) ?? [])];
  }

  /** The owner of a call to `user`: exact first, else the longest prefix; undefined when none. */
  lookup(user: string): { owner: string; route: Route } | undefined {
    const exact = this.byKey.get(key({ match: 'exact', value: user }));
    if (exact) return { owner: exact.owner, route: exact.route };
    for (let n = user.length; n >= 1; n--) {
      const p = this.byKey.get(key({ match: 'userPrefix', value: user.slice(0, n) }));
      if (p) return { owner: p.owner, route: p.route };
    }
    return undefined;
  }

  get size(): number {
    return this.byKey.size;
  }

  /** Every route held, of every owner. */
  all(): Route[] {
    return [...this.byKey.values()].map((e) => e.route);
  }
}

/**
 * The user a route lookup matches on, from the SIP server's query (drachtio's fields): the
 * Request-URI's user (`uriUser`), else the To user (`toUser`). Empty when neither is there.
 */
export function routeUser(query: Readonly<Record<string, string | undefined>>): string {
  return query.uriUser || query.toUser || '';
}

/** What `/sipserver/route` answers for a query, before any fallback. */
export type RouteDecision =
  | { kind: 'route'; owner: string; body: { action: 'route'; data: { tag: string } } }
  /** Not ours: ask SIPSERVER_ROUTE_FALLBACK_URL when set, else `notFound`. */
  | { kind: 'elsewhere'; reason: string };

/** The route handler's 404 answer (no fallback) and the 502 of a failing fallback. */
export const notFound = (reason: string) => ({ action: 'reject' as const, data: { status: 404, reason: 'Not Found', detail: reason } });
export const fallbackFailed = (reason: string) => ({ action: 'reject' as const, data: { status: 502, reason: 'Bad Gateway', detail: reason } });

/**
 * The decision for a route query: this gateway's tag for an INVITE whose user a registered
 * route matches (and only while new work is accepted); everything else is someone else's.
 */
export function decideRoute(query: Readonly<Record<string, string | undefined>>, table: RouteTable, tag: string, accepting: boolean): RouteDecision {
  if (query.method !== 'INVITE') return { kind: 'elsewhere', reason: `this gateway takes only INVITEs (got ${query.method ?? 'no method'})` };
  const user = routeUser(query);
  if (!user) return { kind: 'elsewhere', reason: 'the request names no user (uriUser, toUser)' };
  const hit = table.lookup(user);
  if (!hit) return { kind: 'elsewhere', reason: `no registered route matches user ${JSON.stringify(user)}` };
  if (!accepting) return { kind: 'elsewhere', reason: 'this gateway accepts no new calls (draining)' };
  return { kind: 'route', owner: hit.owner, body: { action: 'route', data: { tag } } };
}

/**
 * A route handler's table as another actor keeps it: the local SIP server is sent the
 * gateway's routes (and whether it accepts new calls) on every change, and routes new INVITEs
 * they select to `tag` without asking. Which connection owns a route does not travel: the
 * gateway finds the owner again when the INVITE reaches it.
 */
export interface RouteCopy {
  tag: string;
  routes: Route[];
  accepting: boolean;
}

/** Where a copy is kept: answers the tag for a query the handler would route to it, else undefined (ask the handler). */
export class CopiedRoutes {
  private table = new RouteTable();
  /** The handler's tag and switch; null before the first copy. */
  private of: { tag: string; accepting: boolean } | null = null;

  set(copy: RouteCopy): void {
    const table = new RouteTable();
    table.register('copy', copy.routes); // one owner: no conflicts
    this.table = table;
    this.of = { tag: copy.tag, accepting: copy.accepting };
  }

  get size(): number {
    return this.table.size;
  }

  /** The handler's tag when its rules route `query` to it (decideRoute), else undefined. */
  select(query: Readonly<Record<string, string | undefined>>): string | undefined {
    const c = this.of;
    if (c === null) return undefined;
    return decideRoute(query, this.table, c.tag, c.accepting).kind === 'route' ? c.tag : undefined;
  }
}
