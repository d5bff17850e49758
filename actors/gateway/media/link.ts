/**
 * The gateway's media link: control connections (owners) create media sessions on the media bridge
 * backends and run the bridge's commands on the sessions they own, through the gateway; the bridges
 * stay unreachable to applications. This file owns the records (owner → session → backend, callId →
 * backend) and the rules on them; the connections are in backend.ts and lane.ts, the placement rule
 * in placement.ts, the command check in params.ts.
 *
 * - A session another owner holds, or none, is SESSION_NOT_FOUND with the bridge's wording: an owner
 *   learns nothing of other owners' sessions.
 * - Events of a session go to its owner only; events of sessions nobody owns are dropped.
 * - session.destroy, a session the bridge no longer has, or `session.detached` removes the record.
 * - releaseOwner forgets the owner's sessions at once (their events stop) and destroys them on their
 *   bridges, several at a time; one on a backend that is down is left to that bridge's orphan
 *   timeout (it destroys sessions whose connection dropped).
 */
import type { Logger } from 'pino';
import type { MediaLink, MediaLinkEvents, MediaLinkFactory } from '../media-link.js';
import type { EventMessage } from '../../../protocols/media/envelope.js';
import { Backend } from './backend.js';
import type { Lane } from './lane.js';
import { asLinkError, MediaLinkError, unavailable, unknownSession } from './errors.js';
import { linkCommands, linkSessions } from './metrics.js';
import { checkLinkCommand, type LinkCommand } from './params.js';
import { placementOrder } from './placement.js';

export interface MediaLinkOptions {
  /** Media bridge command WebSocket URLs (ws: or wss:). */
  backends: string[];
  /** Bearer token of the bridges. */
  token?: string;
  log: Logger;
  events: MediaLinkEvents;
  /** Connections to each backend (default 16): commands of sessions on different ones run in parallel. */
  lanes?: number;
  /** Reconnection backoff after a failed attempt, doubling (default 250 ms to 5 s). */
  backoff?: { minMs: number; maxMs: number };
  /** Deadline of one command on a bridge (default 20 s: the bridge's own is 15 s). */
  commandTimeoutMs?: number;
  /** Deadline of a WebSocket handshake (default 5 s). */
  connectTimeoutMs?: number;
}

/** Sessions destroyed at once by releaseOwner and close. */
const RELEASE_PARALLEL = 8;
/** How long close() spends destroying what is left before it closes the connections. */
const CLOSE_DEADLINE_MS = 5000;

interface SessionRecord {
  id: string;
  owner: string;
  backend: Backend;
  lane: Lane;
  callId: string | undefined;
}

interface Owner {
  sessions: Set<string>;
  /** session.create commands under way: a released owner's new session is destroyed when it arrives. */
  creating: Set<Promise<unknown>>;
  released: boolean;
}

type Create = Extract<LinkCommand, { kind: 'create' }>;
type OnSession = Extract<LinkCommand, { kind: 'session' }>;

class Link implements MediaLink {
  private readonly backends: Backend[];
  private readonly sessions = new Map<string, SessionRecord>();
  private readonly owners = new Map<string, Owner>();
  /** Where each call's sessions are, and how many there are (creations under way included). */
  private readonly calls = new Map<string, { backend: Backend; n: number }>();
  private readonly log: Logger;
  private closing = false;

  constructor(private readonly o: MediaLinkOptions) {
    if (o.backends.length === 0) throw new Error('the media link needs at least one media bridge backend URL');
    for (const url of o.backends) {
      let u: URL | null = null;
      try {
        u = new URL(url);
      } catch {
        /* reported below */
      }
      if (!u || (u.protocol !== 'ws:' && u.protocol !== 'wss:')) throw new Error(`media bridge backend ${JSON.stringify(url)} is not a ws:// or wss:// URL`);
    }
    this.log = o.log.child({ ns: 'media' });
    this.backends = o.backends.map(
      (url, index) =>
        new Backend({
          url,
          index,
          token: o.token,
          log: o.log,
          lanes: o.lanes ?? 16,
          backoff: o.backoff ?? { minMs: 250, maxMs: 5000 },
          commandTimeoutMs: o.commandTimeoutMs ?? 20_000,
          connectTimeoutMs: o.connectTimeoutMs ?? 5000,
          event: (e) => this.event(e),
          gone: (id, reason) => this.gone(id, reason),
        }),
    );
    for (const b of this.backends) linkSessions.set({ backend: b.label }, 0);
  }

  async command(owner: string, method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const checked = checkLinkCommand(method, params);
    if (!checked.ok) {
      linkCommands.inc({ method: 'invalid', outcome: checked.code });
      throw new MediaLinkError(checked.code, checked.message);
    }
    const c = checked.value;
    const started = performance.now();
    try {
      const result = c.kind === 'create' ? await this.create(owner, c) : await this.onSession(owner, c);
      linkCommands.inc({ method, outcome: 'ok' });
      this.log.debug({ owner, method, session: c.kind === 'session' ? c.sessionId : result.session_id, ms: Math.round(performance.now() - started) }, 'media command done');
      return result;
    } catch (err) {
      const e = asLinkError(err);
      if (e !== err) this.log.error({ err, owner, method }, 'media command failed in the link');
      linkCommands.inc({ method, outcome: e.code });
      this.log.debug({ owner, method, session: c.kind === 'session' ? c.sessionId : undefined, code: e.code }, 'media command refused');
      throw e;
    }
  }

  async releaseOwner(owner: string): Promise<void> {
    const o = this.owners.get(owner);
    if (!o) return;
    o.released = true;
    this.owners.delete(owner);
    const records = [...o.sessions].map((id) => this.sessions.get(id)).filter((r): r is SessionRecord => r !== undefined);
    for (const r of records) this.forget(r);
    await eachLimit(records, RELEASE_PARALLEL, (r) => this.destroyOnBridge(r));
    await Promise.allSettled([...o.creating]);
    if (records.length) this.log.info({ owner, sessions: records.length }, "control connection closed: its media sessions destroyed");
  }

  sessionsOf(owner: string): number {
    return this.owners.get(owner)?.sessions.size ?? 0;
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_DEADLINE_MS)));
    await Promise.race([Promise.all([...this.owners.keys()].map((owner) => this.releaseOwner(owner))), deadline]);
    clearTimeout(timer);
    await Promise.all(this.backends.map((b) => b.close()));
  }

  private async create(owner: string, c: Create): Promise<Record<string, unknown>> {
    if (this.closing) throw unavailable('the gateway is closing its media link');
    let pinned: Backend | undefined;
    if (c.colocateWith !== undefined) pinned = this.owned(owner, c.colocateWith).backend;
    const call = c.callId !== undefined ? this.calls.get(c.callId) : undefined;
    if (call && pinned && call.backend !== pinned) {
      throw new MediaLinkError('INVALID_PARAMS', `colocate_with: session ${c.colocateWith} is on another media bridge than the sessions of callId ${c.callId}`);
    }
    pinned ??= call?.backend;
    const o = this.ownerOf(owner);
    const creation = this.place(owner, o, c, pinned);
    o.creating.add(creation);
    try {
      return await creation;
    } finally {
      o.creating.delete(creation);
      this.prune(owner, o);
    }
  }

  /** Create the session on the pinned backend, or on the first of the placement order that answers. */
  private async place(owner: string, o: Owner, c: Create, pinned: Backend | undefined): Promise<Record<string, unknown>> {
    const order = placementOrder(
      this.backends.map((b) => ({ index: b.index, sessions: b.load, reachable: b.reachable })),
      pinned?.index,
    );
    let last: MediaLinkError | undefined;
    for (const index of order) {
      const b = this.backends[index]!;
      if (!this.reserve(c.callId, b)) {
        last = unavailable(`the sessions of callId ${c.callId} were placed on another media bridge meanwhile, which is unavailable`);
        break;
      }
      b.load++;
      const lane = b.pickLane();
      let result: Record<string, unknown>;
      try {
        result = await lane.call(null, 'session.create', c.forward);
      } catch (err) {
        b.load--;
        this.unreserve(c.callId);
        last = asLinkError(err);
        // Unreachable or full (MEDIA_MAX_SESSIONS): the next backend may take it, unless pinned.
        if ((last.code !== 'BACKEND_UNAVAILABLE' && last.code !== 'LIMIT_EXCEEDED') || pinned) throw last;
        continue;
      }
      const id = result.session_id as string;
      const r: SessionRecord = { id, owner, backend: b, lane, callId: c.callId };
      this.sessions.set(id, r);
      linkSessions.set({ backend: b.label }, b.sessions);
      if (o.released || this.closing) {
        // The control connection closed while the bridge was creating it: nobody owns it.
        this.forget(r);
        await this.destroyOnBridge(r);
        throw unavailable('the control connection closed while the session was being created');
      }
      o.sessions.add(id);
      this.log.info({ owner, session: id, backend: b.label, callId: c.callId }, 'media session created');
      return result;
    }
    throw last ?? unavailable('no media bridge backend can take a session');
  }

  private async onSession(owner: string, c: OnSession): Promise<Record<string, unknown>> {
    const r = this.owned(owner, c.sessionId);
    let target: SessionRecord | undefined;
    if (c.command.method === 'endpoint.transfer' && c.command.params.target_session_id !== r.id) {
      target = this.owned(owner, c.command.params.target_session_id);
      if (target.backend !== r.backend) {
        throw new MediaLinkError('INVALID_PARAMS', `target_session_id: session ${target.id} is on another media bridge than session ${r.id}; create both with the same callId, or the target with colocate_with`);
      }
    }
    try {
      const result = await r.lane.call(r.id, c.method, c.forward);
      if (c.method === 'session.destroy') this.forget(r);
      return result;
    } catch (err) {
      const e = asLinkError(err);
      if (e.code === 'SESSION_NOT_FOUND') {
        // The bridge no longer has it (destroyed there, its actor ended): its record goes too.
        for (const s of [r, target]) if (s && e.message.includes(s.id)) this.forget(s);
      } else if (c.method === 'session.destroy' && e.code === 'BACKEND_UNAVAILABLE') {
        this.forget(r);
        throw new MediaLinkError(e.code, `${e.message}; the gateway forgot the session, and the bridge destroys it after its orphan timeout if it is still running`);
      }
      throw e;
    }
  }

  private destroyOnBridge(r: SessionRecord): Promise<void> {
    return r.lane.call(r.id, 'session.destroy', {}).then(
      () => undefined,
      (err) => this.log.warn({ session: r.id, backend: r.backend.label, code: asLinkError(err).code }, 'media session not destroyed on its bridge (the bridge ends it after its orphan timeout if it still runs)'),
    );
  }

  /** A bridge event: to the owner of its session, or dropped. */
  private event(e: EventMessage): void {
    const id = e.data?.session_id;
    const r = typeof id === 'string' ? this.sessions.get(id) : undefined;
    if (!r) return;
    if (e.event === 'session.detached') this.forget(r);
    this.o.events.event(r.owner, e.event, e.data);
  }

  /** A session the bridge no longer had when its lane reconnected: the owner is told. */
  private gone(id: string, reason: string): void {
    const r = this.sessions.get(id);
    if (!r) return;
    this.forget(r);
    this.log.warn({ owner: r.owner, session: id, backend: r.backend.label }, 'media session lost with its bridge');
    this.o.events.event(r.owner, 'session.detached', { session_id: id, reason });
  }

  private owned(owner: string, id: string): SessionRecord {
    const r = this.sessions.get(id);
    if (!r || r.owner !== owner) throw unknownSession(id);
    return r;
  }

  private ownerOf(owner: string): Owner {
    let o = this.owners.get(owner);
    if (!o) this.owners.set(owner, (o = { sessions: new Set(), creating: new Set(), released: false }));
    return o;
  }

  private forget(r: SessionRecord): void {
    if (this.sessions.get(r.id) !== r) return;
    this.sessions.delete(r.id);
    const o = this.owners.get(r.owner);
    o?.sessions.delete(r.id);
    if (o) this.prune(r.owner, o);
    r.lane.sessions.delete(r.id);
    r.backend.load--;
    linkSessions.set({ backend: r.backend.label }, r.backend.sessions);
    this.unreserve(r.callId);
  }

  /** An owner with no session and no creation under way needs no entry. */
  private prune(owner: string, o: Owner): void {
    if (o.sessions.size === 0 && o.creating.size === 0 && this.owners.get(owner) === o) this.owners.delete(owner);
  }

  /** Count a session of `callId` on `b`; false when the call's sessions are on another backend. */
  private reserve(callId: string | undefined, b: Backend): boolean {
    if (callId === undefined) return true;
    const call = this.calls.get(callId);
    if (call && call.backend !== b) return false;
    if (call) call.n++;
    else this.calls.set(callId, { backend: b, n: 1 });
    return true;
  }

  private unreserve(callId: string | undefined): void {
    if (callId === undefined) return;
    const call = this.calls.get(callId);
    if (call && --call.n === 0) this.calls.delete(callId);
  }
}

/** Run `fn` over `items`, at most `limit` at a time. */
async function eachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export const createMediaLink = (opts: MediaLinkOptions): MediaLink => new Link(opts);
createMediaLink satisfies MediaLinkFactory;
