/**
 * The actor system, in the main thread: root supervisor, placement of actors on worker
 * threads, the directory of where each actor runs, the main thread's router, the CPU pool,
 * and the merged Prometheus metrics of every thread.
 */
import type { TaskArg, TaskName, TaskResult } from '../actor/tasks.js';
import { availableParallelism } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import * as Comlink from 'comlink';
import client from 'prom-client';
import { Subject, type Observable } from 'rxjs';
import type { ActorRef, Protocol } from '../actor/protocol.js';
import { describeError } from '../errors.js';
import { createLogger, type Logger } from '../log.js';
import * as rm from '../metrics/runtime-metrics.js';
import * as sm from '../metrics/supervisor-metrics.js';
import { CpuPool, collectBuffers } from '../pool.js';
import { Router } from '../router.js';
import type { MainApi } from '../wire.js';
import type { SupervisionEvent } from './events.js';
import { choosePlacement } from './policy.js';
import { DEFAULT_SHUTDOWN_MS, type ChildSpec, type SupervisorSpec } from './spec.js';
import { Supervisor, type SupervisorServices } from './supervisor.js';
import { Threads, type ThreadHandle } from './threads.js';

export interface SystemOptions {
  stateDir: string;
  logLevel?: string;
  log?: Logger;
  /** Default deadline of a request. */
  requestTimeoutMs?: number;
  mailboxCapacity?: number;
  /** Threads per shared placement group (default: number of CPUs). */
  groupThreads?: number;
  /** Worker threads of the CPU pool (default: number of CPUs). */
  poolThreads?: number;
  /** Root supervisor's restart intensity. */
  intensity?: SupervisorSpec['intensity'];
  /** Deadline for a new worker thread to come up (default 30 s: a loaded 2-core machine is slow). */
  threadStartTimeoutMs?: number;
}

interface Entry {
  threadId: number;
  kind: string;
  spec: ChildSpec;
  supervisor: Supervisor;
}

const HOST_SCRIPT = new URL('../../workers/actor-host.js', import.meta.url);
const TASKS_MODULE = new URL('../../workers/tasks/index.js', import.meta.url);

export class ActorSystem {
  readonly router: Router;
  readonly log: Logger;
  readonly root: Supervisor;
  private readonly opts: SystemOptions;
  private readonly events = new Subject<SupervisionEvent>();
  private readonly threads: Threads;
  private readonly directory = new Map<string, Entry>();
  private readonly supervisors = new Map<string, Supervisor>();
  private readonly pool: CpuPool;
  private failure: ((reason: string) => void) | null = null;
  /** Resolves with a reason if the root supervisor gives up. */
  readonly failed: Promise<string>;
  private stopping = false;
  /** Shared placements, one at a time (see place()). */
  private placing: Promise<unknown> = Promise.resolve();

  private constructor(opts: SystemOptions) {
    this.opts = opts;
    this.log = opts.log ?? createLogger(opts.logLevel ?? 'info', 'supervisor');
    this.failed = new Promise((resolve) => (this.failure = resolve));
    this.router = new Router({
      threadId: 0,
      locate: (id) => this.directory.get(id)?.threadId ?? null,
      connect: () => Promise.reject(new Error('the main thread is connected to every host at start')),
      local: { deliver: () => false },
      defaultTimeoutMs: opts.requestTimeoutMs ?? 5000,
      onDropped: () => rm.droppedTotal.inc({ reason: 'no-such-actor' }),
      onTimeout: () => rm.requestTimeoutsTotal.inc(),
    });
    this.threads = new Threads({
      hostScript: HOST_SCRIPT,
      boot: {
        stateDir: opts.stateDir,
        logLevel: opts.logLevel ?? 'info',
        requestTimeoutMs: opts.requestTimeoutMs ?? 5000,
        mailboxCapacity: opts.mailboxCapacity ?? 10_000,
      },
      mainApi: this.mainApi(),
      router: this.router,
      onExit: (t, code) => this.onThreadExit(t, code),
      startTimeoutMs: opts.threadStartTimeoutMs ?? 30_000,
    });
    this.pool = new CpuPool({ filename: TASKS_MODULE.href, maxThreads: opts.poolThreads });
    this.root = new Supervisor({ id: 'root', children: [], intensity: opts.intensity }, this.services(), null);
  }

  static async start(opts: SystemOptions): Promise<ActorSystem> {
    // Process-wide metrics (CPU, memory, event loop of the main thread) once per process.
    if (!client.register.getSingleMetric('process_cpu_user_seconds_total')) client.collectDefaultMetrics();
    return new ActorSystem(opts);
  }

  get events$(): Observable<SupervisionEvent> {
    return this.events.asObservable();
  }

  ref<P extends Protocol>(id: string): ActorRef<P> {
    return this.router.ref(id);
  }

  /** Start a supervision subtree (or a single actor) under the root, or under `parent`. */
  async start(spec: SupervisorSpec | ChildSpec, parent = 'root'): Promise<void> {
    const sup = this.supervisors.get(parent);
    if (!sup) throw new Error(`no supervisor ${parent}`);
    await sup.addChild(spec);
  }

  /** Stop an actor or a subtree for good. */
  async stopChild(id: string): Promise<void> {
    const entry = this.directory.get(id);
    const sup = entry?.supervisor ?? this.supervisors.get(id)?.parent;
    if (!sup) throw new Error(`no actor or supervisor ${id}`);
    await sup.removeChild(id);
  }

  /** Where an actor runs now (thread id), or null. */
  locate(id: string): number | null {
    return this.directory.get(id)?.threadId ?? null;
  }

  threadInfo(): Array<{ threadId: number; group: string | null; actors: string[] }> {
    return this.threads.all().map((t) => ({ threadId: t.threadId, group: t.group, actors: [...t.actors] }));
  }

  runTask<N extends TaskName>(name: N, arg: TaskArg<N>, transfer: ArrayBuffer[] = []): Promise<TaskResult<N>> {
    return this.pool.run<TaskResult<N>>(name, arg, transfer);
  }

  /** Prometheus text of every thread, merged. */
  async metrics(): Promise<string> {
    this.updateGauges();
    const perThread = await Promise.all(
      this.threads.all().map((t) =>
        Promise.race([t.api.metrics(), new Promise<unknown[]>((r) => setTimeout(() => r([]), 2000))]).catch(() => [] as unknown[]),
      ),
    );
    const own = await client.register.getMetricsAsJSON();
    const merged = client.AggregatorRegistry.aggregate([own, ...perThread] as never);
    return merged.metrics();
  }

  /** Ordered shutdown of the whole tree, then the threads and the pool. */
  async shutdown(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    await this.root.stop();
    this.router.close();
    await this.threads.terminateAll();
    await this.pool.close();
    this.events.complete();
  }

  private updateGauges(): void {
    sm.actorsGauge.reset();
    for (const e of this.directory.values()) sm.actorsGauge.inc({ kind: e.kind });
    sm.threadsGauge.reset();
    for (const t of this.threads.all()) sm.threadsGauge.inc({ group: t.group ?? 'dedicated' });
  }

  private services(): SupervisorServices {
    return {
      log: this.log,
      emit: (ev) => {
        if (ev.type === 'child-restarted') {
          const kind = this.directory.get(ev.id)?.kind;
          if (kind) sm.restartsTotal.inc({ kind });
        }
        if (ev.type === 'escalated') sm.escalationsTotal.inc({ supervisor: ev.supervisor });
        this.events.next(ev);
      },
      startActor: (spec, sup) => this.startActor(spec, sup),
      restartActor: (spec, sup) => this.restartActor(spec, sup),
      stopActor: (id, deadlineMs, reason) => this.stopActor(id, deadlineMs, reason),
      register: (sup) => this.supervisors.set(sup.id, sup),
      unregister: (sup) => {
        if (this.supervisors.get(sup.id) === sup) this.supervisors.delete(sup.id);
      },
      rootFailed: (reason) => {
        this.log.fatal({ reason }, 'root supervisor gave up');
        this.events.next({ type: 'root-failed', reason, at: Date.now() });
        this.failure?.(reason);
      },
    };
  }

  /**
   * Choose a thread and reserve the actor's place on it. Shared placements are decided one at
   * a time, each seeing the reservations before it: actors started at the same moment spread
   * over the group instead of all taking the first idle thread.
   */
  private place(spec: ChildSpec): Promise<ThreadHandle> {
    const placement = spec.placement ?? { mode: 'dedicated' as const };
    const decide = async () => {
      const choice = choosePlacement(this.threads.loads(), placement, this.opts.groupThreads ?? availableParallelism(), (id) => this.directory.get(id)?.threadId ?? null);
      const thread = choice.kind === 'existing' ? this.threads.get(choice.threadId)! : await this.threads.start(choice.group);
      thread.actors.add(spec.id);
      return thread;
    };
    if (placement.mode === 'dedicated') return decide();
    const turn = this.placing.then(decide);
    this.placing = turn.catch(() => undefined);
    return turn;
  }

  private async startActor(spec: ChildSpec, supervisor: Supervisor): Promise<void> {
    if (this.directory.has(spec.id)) throw new Error(`an actor with id ${spec.id} already exists`);
    const thread = await this.place(spec);
    if (this.directory.has(spec.id)) {
      thread.actors.delete(spec.id);
      throw new Error(`an actor with id ${spec.id} already exists`);
    }
    const entry: Entry = { threadId: thread.threadId, kind: '?', spec, supervisor };
    this.directory.set(spec.id, entry);
    try {
      const { kind } = await thread.api.spawn({
        id: spec.id,
        module: spec.module,
        args: spec.args ?? null,
        supervisor: supervisor.id,
        shutdownMs: spec.shutdownMs ?? DEFAULT_SHUTDOWN_MS,
      });
      entry.kind = kind;
    } catch (err) {
      thread.actors.delete(spec.id);
      this.directory.delete(spec.id);
      if (thread.group === null && thread.actors.size === 0) await this.threads.retire(thread.threadId);
      throw err;
    }
  }

  private async restartActor(spec: ChildSpec, supervisor: Supervisor): Promise<void> {
    const id = spec.id;
    const entry = this.directory.get(id);
    // Not placed (its first spawn failed, or so did its re-placement after its thread died): spawn anew.
    if (!entry) return this.startActor(spec, supervisor);
    const thread = this.threads.get(entry.threadId);
    if (thread?.alive) {
      await thread.api.restart(id);
      return;
    }
    // Its thread died: place it anew.
    this.directory.delete(id);
    await this.startActor(entry.spec, entry.supervisor);
  }

  private async stopActor(id: string, deadlineMs: number, reason: 'stopped' | 'shutdown'): Promise<boolean> {
    const entry = this.directory.get(id);
    if (!entry) return true;
    const thread = this.threads.get(entry.threadId);
    let clean = true;
    if (thread?.alive) {
      let timer: NodeJS.Timeout | undefined;
      const hung = new Promise<{ clean: boolean } | 'hung'>((r) => (timer = setTimeout(() => r('hung'), deadlineMs + 1000)));
      const res = await Promise.race([thread.api.stop(id, reason, deadlineMs), hung]).catch(() => ({ clean: false }));
      clearTimeout(timer);
      if (res === 'hung') {
        // The thread does not answer at all (blocked): it is dead to us.
        this.log.error({ actor: id, threadId: thread.threadId }, 'thread did not answer a stop; terminating it');
        clean = false;
        thread.actors.delete(id);
        this.directory.delete(id);
        await thread.worker.terminate();
        return clean;
      }
      clean = res.clean;
      thread.actors.delete(id);
      if (thread.group === null && thread.actors.size === 0) await this.threads.retire(thread.threadId);
    }
    this.directory.delete(id);
    return clean;
  }

  private onThreadExit(thread: ThreadHandle, code: number): void {
    this.log.error({ threadId: thread.threadId, code, actors: [...thread.actors] }, 'worker thread exited');
    this.router.forgetThread(thread.threadId);
    for (const t of this.threads.all()) void t.api.forgetThread(thread.threadId).catch(() => undefined);
    for (const id of thread.actors) {
      const entry = this.directory.get(id);
      if (!entry || entry.threadId !== thread.threadId) continue;
      sm.crashesTotal.inc({ kind: entry.kind, cause: 'thread-exit' });
      entry.supervisor.onChildCrash(id, 'thread-exit', `thread ${thread.threadId} exited with code ${code}`);
    }
  }

  private mainApi(): MainApi {
    return {
      locate: (id) => this.directory.get(id)?.threadId ?? null,
      connect: async (from, to) => {
        if (to === 0) {
          const ch = new MessageChannel();
          this.router.addPort(from, ch.port2);
          return Comlink.transfer(ch.port1, [ch.port1 as never]);
        }
        const port = await this.threads.connect(from, to);
        return Comlink.transfer(port, [port as never]);
      },
      crashed: (threadId, report) => {
        const entry = this.directory.get(report.id);
        if (!entry || entry.threadId !== threadId) return;
        sm.crashesTotal.inc({ kind: report.kind, cause: report.cause });
        entry.supervisor.onChildCrash(report.id, report.cause, report.message);
      },
      spawn: async (spec, supervisorId) => {
        const sup = this.supervisors.get(supervisorId);
        if (!sup) throw new Error(`no supervisor ${supervisorId}`);
        await sup.addChild(spec);
      },
      stop: (id) => this.stopChild(id),
      runTask: async (name, job) => {
        try {
          const result = await this.pool.run(name, job.arg, job.transfer as ArrayBuffer[]);
          const out = collectBuffers(result);
          return out.length ? Comlink.transfer(result, out as never[]) : result;
        } catch (err) {
          throw new Error(`task ${name} failed: ${describeError(err).message}`);
        }
      },
    };
  }
}
