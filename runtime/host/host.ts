/**
 * The actor host: runs in a worker thread, holds any number of actors (each with its own
 * mailbox), delivers their messages, and reports their crashes to the supervisor.
 *
 * Fault isolation: every handler, timer and promise of an actor runs inside its
 * AsyncLocalStorage context, so an error anywhere in it crashes that actor alone. An error
 * that belongs to no actor takes the thread down; the supervisor restarts what it hosted.
 */
import { pathToFileURL } from 'node:url';
import { threadId } from 'node:worker_threads';
import * as Comlink from 'comlink';
import type { Logger } from 'pino';
import type { ActorDefinition } from '../actor/define.js';
import { isTransferring, type Protocol, type Transferable } from '../actor/protocol.js';
import { CheckpointStore } from '../checkpoint/store.js';
import { ActorError, ReplyError, describeError } from '../errors.js';
import { createLogger } from '../log.js';
import * as m from '../metrics/runtime-metrics.js';
import { Router } from '../router.js';
import type { CrashReport, Delivery, HostApi, HostBoot, MainApi, SpawnRequest } from '../wire.js';
import { ActorInstance, currentInstance, type ReplyFn } from './instance.js';

interface Queued {
  env: Delivery;
  reply: ReplyFn;
}

interface Slot {
  req: SpawnRequest;
  /** null while its module loads. */
  def: ActorDefinition<Protocol, unknown, unknown, unknown> | null;
  /** `starting`: its module loads, then init runs; messages wait in the queue until it is done. */
  status: 'starting' | 'running' | 'crashed' | 'stopping';
  instance: ActorInstance | null;
  queue: Queued[];
  busy: number;
  /** The previous instance's end(), awaited before a restart. */
  ending: Promise<unknown>;
}

export class Host {
  readonly router: Router;
  private readonly slots = new Map<string, Slot>();
  private readonly boot: HostBoot;
  private readonly main: Comlink.Remote<MainApi>;
  private readonly store: CheckpointStore;
  private readonly log: Logger;
  private readonly rootLog: Logger;

  constructor(boot: HostBoot) {
    this.boot = boot;
    this.rootLog = createLogger(boot.logLevel);
    this.log = this.rootLog.child({ ns: 'host' });
    this.store = CheckpointStore.open(boot.stateDir);
    this.main = Comlink.wrap<MainApi>(boot.mainPort as never);
    this.router = new Router({
      threadId: threadId,
      locate: (id) => (this.slots.has(id) ? threadId : this.main.locate(id)),
      connect: (t) => this.main.connect(threadId, t),
      local: { deliver: (env, reply) => this.deliver(env, reply) },
      defaultTimeoutMs: boot.requestTimeoutMs,
      onDropped: () => m.droppedTotal.inc({ reason: 'no-such-actor' }),
      onTimeout: () => m.requestTimeoutsTotal.inc(),
    });
    this.router.addPort(0, boot.dataPort);
    Comlink.expose(this.api(), boot.hostPort as never);
    process.on('uncaughtException', (err) => this.onStrayError('uncaught', err));
    process.on('unhandledRejection', (err) => this.onStrayError('unhandled-rejection', err));
  }

  private api(): HostApi {
    return {
      spawn: (req) => this.spawn(req),
      restart: (id) => this.restart(id),
      stop: (id, reason, deadline) => this.stop(id, reason, deadline),
      connect: (threadId, port) => this.router.addPort(threadId, port),
      forgetThread: (threadId) => this.router.forgetThread(threadId),
      metrics: async () => {
        let depth = 0;
        for (const s of this.slots.values()) depth += s.queue.length;
        m.mailboxDepth.set({ thread: String(threadId) }, depth);
        return m.registry.getMetricsAsJSON();
      },
      ping: () => 'pong',
    };
  }

  private async spawn(req: SpawnRequest): Promise<{ kind: string }> {
    if (this.slots.has(req.id)) throw new Error(`actor ${req.id} already runs on thread ${threadId}`);
    // The directory already names this thread: take the actor's messages (queued) from now on,
    // while its module loads, instead of bouncing them as if it did not exist.
    const slot: Slot = { req, def: null, status: 'starting', instance: null, queue: [], busy: 0, ending: Promise.resolve() };
    this.slots.set(req.id, slot);
    let def: ActorDefinition<Protocol, unknown, unknown, unknown>;
    try {
      def = await loadDefinition(req.module);
    } catch (err) {
      if (this.slots.get(req.id) === slot) this.slots.delete(req.id);
      const message = `actor ${req.id} failed to start: ${describeError(err).message}`;
      for (const q of slot.queue.splice(0)) {
        if (q.env.k === 'req') q.reply({ k: 'rep', rid: q.env.rid, ok: false, error: { code: 'ACTOR_CRASHED', message } });
      }
      throw err;
    }
    slot.def = def;
    if (slot.status !== 'starting') return { kind: def.kind }; // stopped while loading
    await this.startInstance(slot);
    return { kind: def.kind };
  }

  private async restart(id: string): Promise<{ kind: string }> {
    const slot = this.slots.get(id);
    if (!slot) throw new Error(`no actor ${id} on thread ${threadId}`);
    await slot.ending;
    await this.startInstance(slot);
    return { kind: slot.def!.kind };
  }

  private async startInstance(slot: Slot): Promise<void> {
    const { id, args, supervisor } = slot.req;
    const inst = new ActorInstance(id, slot.def!, args, supervisor, {
      log: this.rootLog,
      ref: (target) => this.router.ref(target),
      checkpoint: async (aid, kind, state) => {
        await this.store.save(aid, kind, state);
        m.checkpointsTotal.inc({ kind });
      },
      clearCheckpoint: (aid) => this.store.delete(aid),
      spawn: (spec, sup) => this.main.spawn(spec, sup),
      stop: (target) => this.main.stop(target),
      runTask: (name, arg, transfer) => this.main.runTask(name, Comlink.transfer({ arg, transfer }, transfer as never[])),
    });
    slot.instance = inst;
    slot.busy = 0;
    slot.status = 'starting';
    try {
      await inst.init(this.store.load(id)?.state);
    } catch (err) {
      this.crash(inst, 'init', err);
      return;
    }
    // Stopped, or crashed (an error from a timer or promise of its init), while init ran.
    if (slot.instance !== inst || inst.ended || slot.status !== 'starting') return;
    slot.status = 'running';
    this.pump(slot);
  }

  private deliver(env: Delivery, reply: ReplyFn): boolean {
    const slot = this.slots.get(env.to);
    if (!slot) return false;
    if (slot.status === 'stopping') {
      if (env.k === 'req') reply({ k: 'rep', rid: env.rid, ok: false, error: { code: 'ACTOR_STOPPED', message: `actor ${env.to} is stopping` } });
      else m.droppedTotal.inc({ reason: 'stopped' });
      return true;
    }
    if (slot.queue.length >= this.boot.mailboxCapacity) {
      m.droppedTotal.inc({ reason: 'mailbox-full' });
      if (env.k === 'req') reply({ k: 'rep', rid: env.rid, ok: false, error: { code: 'MAILBOX_FULL', message: `mailbox of ${env.to} is full (${this.boot.mailboxCapacity} messages)` } });
      return true;
    }
    slot.queue.push({ env, reply });
    this.pump(slot);
    return true;
  }

  private pump(slot: Slot): void {
    if (slot.status !== 'running') return;
    const limit = Math.max(1, slot.def!.concurrency ?? 1);
    while (slot.status === 'running' && slot.busy < limit && slot.queue.length) {
      const item = slot.queue.shift()!;
      const inst = slot.instance!;
      slot.busy++;
      void this.handle(slot, inst, item).finally(() => {
        // A handler of an instance that has since crashed does not hold up its successor
        // (startInstance reset the count for the new instance).
        if (slot.instance !== inst) return;
        slot.busy--;
        if (!inst.ended) this.pump(slot);
      });
    }
  }

  private async handle(slot: Slot, inst: ActorInstance, { env, reply }: Queued): Promise<void> {
    const def = inst.def;
    const kind = def.kind;
    const km = m.kindMetrics(kind);
    const type = env.body?.type;
    const handler = typeof type === 'string' && Object.hasOwn(def.handlers, type) ? (def.handlers as Record<string, Function>)[type] : undefined;
    if (!handler) {
      km.unknown.inc();
      const message = `actor ${env.to} (${kind}) has no handler for message type ${JSON.stringify(type)}`;
      if (env.k === 'req') reply({ k: 'rep', rid: env.rid, ok: false, error: { code: 'UNKNOWN_MESSAGE', message } });
      else inst.ctx.log.warn({ type }, message);
      return;
    }
    if (env.k === 'req') inst.inflight.set(env.rid, reply);
    const end = km.handler.startTimer();
    try {
      const returned: unknown = await inst.run(() => handler(env.body, inst.ctx, inst.live));
      end();
      if (inst.ended) return;
      // The reply is what the handler returned when it returned: a checkpoint awaited before the
      // reply goes out lets other work run, which may change objects the reply refers to (a
      // progress view holding the live run record read a count newer than its percent).
      const result = inst.holdsReplies && !isTransferring(returned) ? structuredClone(returned) : returned;
      await inst.persistAfterHandler();
      if (inst.ended) return;
      km.ok.inc();
      if (env.k === 'req') {
        inst.inflight.delete(env.rid);
        if (isTransferring(result)) reply({ k: 'rep', rid: env.rid, ok: true, value: result.value }, result.transfer);
        else reply({ k: 'rep', rid: env.rid, ok: true, value: result });
      }
    } catch (err) {
      end();
      if (inst.ended) return;
      if (err instanceof ReplyError) {
        km.replyError.inc();
        try {
          await inst.persistAfterHandler();
        } catch (saveErr) {
          if (inst.ended) return;
          km.crash.inc();
          this.crash(inst, 'handler', saveErr);
          return;
        }
        if (inst.ended) return;
        if (env.k === 'req') {
          inst.inflight.delete(env.rid);
          reply({ k: 'rep', rid: env.rid, ok: false, error: { code: 'REPLY_ERROR', message: err.message, appCode: err.code, details: err.details } });
        } else inst.ctx.log.warn({ type, code: err.code }, err.message);
        return;
      }
      km.crash.inc();
      this.crash(inst, 'handler', err);
    }
  }

  /** An actor instance crashed: fail what it was handling, end it, tell the supervisor. */
  private crash(inst: ActorInstance, cause: CrashReport['cause'], err: unknown): void {
    const slot = this.slots.get(inst.id);
    const { message, stack } = describeError(err);
    if (inst.ended || !slot || slot.instance !== inst) {
      this.log.warn({ actor: inst.id, cause, err: message }, 'error from an instance that already ended; ignored');
      return;
    }
    inst.ctx.log.error({ cause, err: { message, stack } }, 'actor crashed');
    slot.status = 'crashed';
    const failure = new ActorError('ACTOR_CRASHED', `actor ${inst.id} crashed: ${message}`).toWire();
    for (const [rid, reply] of inst.inflight) reply({ k: 'rep', rid, ok: false, error: failure });
    inst.inflight.clear();
    slot.ending = inst.end('crash', slot.req.shutdownMs);
    void this.main.crashed(threadId, { id: inst.id, kind: inst.def.kind, cause, message, stack });
  }

  private async stop(id: string, reason: 'shutdown' | 'stopped' | 'crash', deadlineMs: number): Promise<{ clean: boolean }> {
    const slot = this.slots.get(id);
    if (!slot) return { clean: true };
    slot.status = 'stopping';
    for (const q of slot.queue.splice(0)) {
      if (q.env.k === 'req') q.reply({ k: 'rep', rid: q.env.rid, ok: false, error: { code: 'ACTOR_STOPPED', message: `actor ${id} stopped` } });
    }
    let clean = true;
    if (slot.instance && !slot.instance.ended) {
      for (const [rid, reply] of slot.instance.inflight) reply({ k: 'rep', rid, ok: false, error: { code: 'ACTOR_STOPPED', message: `actor ${id} stopped` } });
      clean = await slot.instance.end(reason, deadlineMs);
    } else {
      await slot.ending;
    }
    this.slots.delete(id);
    return { clean };
  }

  private onStrayError(cause: 'uncaught' | 'unhandled-rejection', err: unknown): void {
    // Callbacks from native code (a uWS socket, a FUSE request) carry no async context. On a
    // thread of a single actor the error can only be that actor's: crash it, not the thread.
    const sole = this.slots.size === 1 ? [...this.slots.values()][0]!.instance : null;
    const inst = currentInstance.getStore() ?? (sole && !sole.ended ? sole : undefined);
    if (inst) {
      this.crash(inst, cause, err);
      return;
    }
    this.log.fatal({ cause, err: describeError(err) }, 'error outside any actor; thread exits');
    process.exit(70);
  }
}

async function loadDefinition(module: string): Promise<ActorDefinition<Protocol, unknown, unknown, unknown>> {
  const url = module.startsWith('file:') ? module : pathToFileURL(module).href;
  const mod = (await import(url)) as { default?: ActorDefinition<Protocol, unknown, unknown, unknown> };
  const def = mod.default;
  if (!def || typeof def.kind !== 'string' || typeof def.handlers !== 'object' || typeof def.init !== 'function') {
    throw new Error(`module ${module} has no actor definition as its default export`);
  }
  return def;
}

export type { Transferable };
