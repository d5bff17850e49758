/**
 * Per-thread message router: turns ActorRef.send/request into Envelopes on the right
 * MessagePort, matches replies to requests, enforces request deadlines.
 *
 * Every thread (main included) has exactly one Router. Locations (actor id -> thread id)
 * are resolved lazily through `locate` and cached; a stale cache entry is corrected by a
 * `miss` bounce from the thread that no longer hosts the actor.
 */
import type { MessagePort } from 'node:worker_threads';
import { ActorError } from './errors.js';
import type { ActorRef, Message, RequestOptions, SendOptions, Transferable } from './actor/protocol.js';
import type { Delivery, Envelope, Reply } from './wire.js';

/** How a router hands a delivery to the actors of its own thread. */
export interface LocalDelivery {
  /** Returns false when this thread hosts no actor with that id (the router then bounces it). */
  deliver(env: Delivery, reply: (rep: Reply, transfer?: Transferable[]) => void): boolean;
}

export interface RouterOptions {
  threadId: number;
  locate(id: string): Promise<number | null> | number | null;
  connect(threadId: number): Promise<MessagePort>;
  local: LocalDelivery;
  defaultTimeoutMs: number;
  /** Called for casts that could not be delivered (no such actor). */
  onDropped?(to: string, type: string): void;
  onTimeout?(to: string, type: string): void;
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
  to: string;
  type: string;
  threadId: number | null;
}

interface Queued {
  env: Delivery;
  transfer: Transferable[];
  handover?: boolean;
}

const MAX_HOPS = 3;

export class Router {
  readonly threadId: number;
  private readonly opts: RouterOptions;
  private readonly ports = new Map<number, MessagePort>();
  private readonly connecting = new Map<number, Promise<MessagePort>>();
  private readonly locations = new Map<string, number>();
  /** Deliveries waiting for a location, per destination, in send order. */
  private readonly waiting = new Map<string, Queued[]>();
  private readonly pending = new Map<number, Pending>();
  private nextRid = 1;
  private closed = false;

  constructor(opts: RouterOptions) {
    this.opts = opts;
    this.threadId = opts.threadId;
  }

  /** A typed reference; any id is accepted (an unknown one fails at delivery). */
  ref<R extends ActorRef>(id: string): R {
    const router = this;
    const ref: ActorRef = {
      id,
      send(msg: Message, o?: SendOptions) {
        router.send(id, msg, o);
      },
      request(msg: Message, o?: RequestOptions) {
        return router.request(id, msg, o) as Promise<never>;
      },
    };
    return ref as R;
  }

  addPort(threadId: number, port: MessagePort): void {
    // Two threads may connect to each other at once: keep listening on both channels, send on the newest.
    this.ports.set(threadId, port);
    port.on('message', (env: Envelope) => this.onEnvelope(env, port));
    port.unref();
  }

  /** Forget a dead thread: its port, the locations on it, and fail requests sent to it. */
  forgetThread(threadId: number): void {
    const port = this.ports.get(threadId);
    if (port) {
      port.close();
      this.ports.delete(threadId);
    }
    for (const [id, t] of this.locations) if (t === threadId) this.locations.delete(id);
    for (const [rid, p] of this.pending) {
      if (p.threadId === threadId) {
        this.settle(rid, { k: 'rep', rid, ok: false, error: { code: 'ACTOR_CRASHED', message: `actor ${p.to} crashed: its thread ${threadId} exited` } });
      }
    }
  }

  forgetLocation(id: string): void {
    this.locations.delete(id);
  }

  send(to: string, body: Message, o?: SendOptions): void {
    this.route({ k: 'cast', to, body }, o?.transfer ?? [], 0, o?.handover === true);
  }

  request(to: string, body: Message, o?: RequestOptions): Promise<unknown> {
    const rid = this.nextRid++;
    const timeoutMs = o?.timeoutMs ?? this.opts.defaultTimeoutMs;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(rid);
        this.opts.onTimeout?.(to, body.type);
        reject(new ActorError('TIMEOUT', `request ${body.type} to ${to} got no reply within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(rid, { resolve, reject, timer, to, type: body.type, threadId: null });
      this.route({ k: 'req', to, body, rid }, o?.transfer ?? [], 0, o?.handover === true);
    });
  }

  /** Fail every pending request (the thread is going away). */
  close(): void {
    this.closed = true;
    for (const [rid, p] of this.pending) {
      this.settle(rid, { k: 'rep', rid, ok: false, error: { code: 'ACTOR_STOPPED', message: `request ${p.type} to ${p.to} abandoned: runtime is shutting down` } });
    }
    for (const port of this.ports.values()) port.close();
    this.ports.clear();
  }

  private route(env: Delivery, transfer: Transferable[], hops: number, handover = false): void {
    if (this.closed) {
      this.undeliverable(env, 'ACTOR_STOPPED', 'runtime is shutting down');
      return;
    }
    const loc = this.locations.get(env.to);
    if (loc !== undefined && !this.waiting.has(env.to)) {
      this.post(loc, env, transfer, hops, handover);
      return;
    }
    // Detach the sender's buffers now, whatever the wait: moving into a clone is zero-copy.
    const moved: Queued = transfer.length ? (structuredClone({ env, transfer }, { transfer: transfer as never[] }) as Queued) : { env, transfer, handover };
    const q = this.waiting.get(env.to);
    if (q) {
      q.push(moved);
      return;
    }
    this.waiting.set(env.to, [moved]);
    void this.resolve(env.to, hops);
  }

  private async resolve(to: string, hops: number): Promise<void> {
    let loc: number | null = null;
    let failure: string | null = null;
    try {
      loc = await this.opts.locate(to);
      if (loc !== null && loc !== this.threadId && !this.ports.has(loc)) await this.portTo(loc);
    } catch (err) {
      failure = (err as Error).message;
    }
    const q = this.waiting.get(to) ?? [];
    this.waiting.delete(to);
    if (loc === null || failure) {
      for (const item of q) this.undeliverable(item.env, 'NO_SUCH_ACTOR', failure ?? `no actor with id ${to}`);
      return;
    }
    this.locations.set(to, loc);
    for (const item of q) this.post(loc, item.env, item.transfer, hops, item.handover);
  }

  private async portTo(threadId: number): Promise<MessagePort> {
    const have = this.ports.get(threadId);
    if (have) return have;
    let p = this.connecting.get(threadId);
    if (!p) {
      p = this.opts.connect(threadId).then((port) => {
        this.addPort(threadId, port);
        return port;
      });
      p.finally(() => this.connecting.delete(threadId)).catch(() => undefined);
      this.connecting.set(threadId, p);
    }
    return p;
  }

  private post(threadId: number, env: Delivery, transfer: Transferable[], hops: number, handover = false): void {
    if (env.k === 'req') {
      const p = this.pending.get(env.rid);
      if (!p) return; // timed out while waiting for a location
      p.threadId = threadId;
    }
    if (threadId === this.threadId) {
      // A message handed over (SendOptions.handover) is the receiver's already: no clone.
      const moved = transfer.length ? (structuredClone({ env, transfer }, { transfer: transfer as never[] }) as Queued).env : handover ? env : structuredClone(env);
      this.enqueueLocal(moved);
      return;
    }
    const port = this.ports.get(threadId);
    if (!port) {
      // The location is known but the port went away (thread died meanwhile): resolve again.
      this.locations.delete(env.to);
      if (hops >= MAX_HOPS) return this.undeliverable(env, 'NO_SUCH_ACTOR', `no route to actor ${env.to}`);
      this.route(env, transfer, hops + 1, handover);
      return;
    }
    port.postMessage(hops ? { ...env, h: hops } : env, transfer as never[]);
  }

  /**
   * Deliver to an actor of this thread as a port would: one macrotask per message, so the
   * receiver's handler (and its microtasks) run between messages and a burst does not pile up
   * in its mailbox; and setImmediate, not a microtask, so two actors of one thread talking
   * forever cannot starve the thread's I/O. setImmediate callbacks run in order.
   */
  private enqueueLocal(env: Delivery): void {
    setImmediate(() => this.onEnvelope(env, null));
  }

  private onEnvelope(env: Envelope, port: MessagePort | null): void {
    switch (env.k) {
      case 'rep':
        this.settle(env.rid, env);
        return;
      case 'miss':
        this.rerouteMiss(env.env);
        return;
      case 'cast':
      case 'req': {
        const known = this.opts.local.deliver(env, (rep, transfer) => {
          if (port) port.postMessage(rep, (transfer ?? []) as never[]);
          // Same thread: a reply is a value, as across threads: clone it (moving what is transferred),
          // so the requester never shares an object with the replier.
          else this.settle(rep.rid, structuredClone(rep, transfer?.length ? { transfer: transfer as never[] } : undefined));
        });
        if (known) return;
        // Not hosted here (stale location at the sender): bounce it back so the sender re-resolves.
        if (port) port.postMessage({ k: 'miss', env } satisfies Envelope);
        else this.rerouteMiss(env);
        return;
      }
    }
  }

  private rerouteMiss(env: Delivery): void {
    this.locations.delete(env.to);
    const hops = (env.h ?? 0) + 1;
    if (hops > MAX_HOPS) return this.undeliverable(env, 'NO_SUCH_ACTOR', `no actor with id ${env.to}`);
    this.route({ ...env, h: hops }, [], hops);
  }

  private settle(rid: number, rep: Reply): void {
    const p = this.pending.get(rid);
    if (!p) return;
    this.pending.delete(rid);
    clearTimeout(p.timer);
    if (rep.ok) p.resolve(rep.value);
    else {
      if (rep.error.code === 'NO_SUCH_ACTOR') this.locations.delete(p.to);
      p.reject(ActorError.fromWire(rep.error));
    }
  }

  private undeliverable(env: Delivery, code: 'NO_SUCH_ACTOR' | 'ACTOR_STOPPED', message: string): void {
    if (env.k === 'req') this.settle(env.rid, { k: 'rep', rid: env.rid, ok: false, error: { code, message } });
    else this.opts.onDropped?.(env.to, env.body.type);
  }
}
