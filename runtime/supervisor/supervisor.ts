/**
 * A supervisor node (main thread): one-for-one supervision of actors and of child
 * supervisors, restart with exponential backoff, restart intensity with escalation to the
 * parent, ordered and bounded shutdown (children in reverse start order, each within its
 * deadline, before the supervisor itself counts as stopped).
 */
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { backoffDelay, recordRestart } from './policy.js';
import {
  DEFAULT_BACKOFF, DEFAULT_INTENSITY, DEFAULT_SHUTDOWN_MS, isSupervisorSpec,
  type BackoffSpec, type ChildSpec, type IntensitySpec, type SupervisorSpec,
} from './spec.js';
import type { SupervisionEvent } from './events.js';

/** What a supervisor needs from the actor system. */
export interface SupervisorServices {
  log: Logger;
  emit(ev: SupervisionEvent): void;
  startActor(spec: ChildSpec, supervisor: Supervisor): Promise<void>;
  /** Start a new instance of a crashed actor (spawned anew if it has no place any more). */
  restartActor(spec: ChildSpec, supervisor: Supervisor): Promise<void>;
  /** `stopped`: removed for good (removeChild); `shutdown`: the tree is stopping (shutdown, escalation). */
  stopActor(id: string, deadlineMs: number, reason: 'stopped' | 'shutdown'): Promise<boolean>;
  register(sup: Supervisor): void;
  unregister(sup: Supervisor): void;
  /** The root gave up: the whole system must stop. */
  rootFailed(reason: string): void;
}

interface Child {
  spec: ChildSpec | SupervisorSpec;
  node: Supervisor | null;
  status: 'starting' | 'running' | 'restarting' | 'stopped';
  attempts: number[];
  timer: NodeJS.Timeout | null;
  restarting: Promise<void> | null;
  /** Why it crashed (or its restart failed) while a restart was in progress; null if it did not. */
  crashedDuringRestart: string | null;
  /** The stop in progress or done: stopping twice waits for the same stop. */
  stopping: Promise<void> | null;
}

export class Supervisor {
  readonly id: string;
  readonly parent: Supervisor | null;
  status: 'running' | 'stopping' | 'stopped' | 'failed' = 'running';
  private readonly spec: SupervisorSpec;
  private readonly sys: SupervisorServices;
  private readonly children = new Map<string, Child>();
  private readonly intensity: IntensitySpec;
  private history: number[] = [];
  /** The stop in progress or done: a second caller waits for the same stop. */
  private stopped: Promise<void> | null = null;

  constructor(spec: SupervisorSpec, sys: SupervisorServices, parent: Supervisor | null) {
    this.spec = spec;
    this.id = spec.id;
    this.sys = sys;
    this.parent = parent;
    this.intensity = { ...DEFAULT_INTENSITY, ...spec.intensity };
    sys.register(this);
  }

  /** Start the children of the spec in order. A child that fails to start counts as a crash. */
  async start(): Promise<void> {
    for (const spec of this.spec.children) await this.addChild(spec);
  }

  childIds(): string[] {
    return [...this.children.keys()];
  }

  async addChild(spec: ChildSpec | SupervisorSpec): Promise<void> {
    if (this.status !== 'running') throw new Error(`supervisor ${this.id} is ${this.status}; cannot start ${spec.id}`);
    if (this.children.has(spec.id)) throw new Error(`supervisor ${this.id} already has a child ${spec.id}`);
    const child: Child = { spec, node: null, status: 'starting', attempts: [], timer: null, restarting: null, crashedDuringRestart: null, stopping: null };
    this.children.set(spec.id, child);
    try {
      await this.startChild(child);
    } catch (err) {
      const { message } = describeError(err);
      this.sys.log.error({ supervisor: this.id, child: spec.id, err: message }, 'child failed to start');
      this.onChildCrash(spec.id, 'init', message);
    }
  }

  private async startChild(child: Child): Promise<void> {
    if (isSupervisorSpec(child.spec)) {
      child.node = new Supervisor(child.spec, this.sys, this);
      markRunning(child);
      await child.node.start();
    } else {
      await this.sys.startActor(child.spec, this);
      markRunning(child);
    }
    this.sys.emit({ type: 'child-started', supervisor: this.id, id: child.spec.id, at: Date.now() });
  }

  /** A child crashed (actor instance, its thread, or a child supervisor that escalated). */
  onChildCrash(id: string, cause: string, message: string): void {
    const child = this.children.get(id);
    if (!child || this.status !== 'running' || child.status === 'stopped') return;
    if (child.timer) return; // a restart is already scheduled
    if (child.restarting) {
      child.crashedDuringRestart = message;
      return;
    }
    const now = Date.now();
    this.sys.emit({ type: 'child-crashed', supervisor: this.id, id, cause, message, at: now });
    const restart = child.spec.restart ?? 'permanent';
    if (restart === 'temporary') {
      void this.removeChild(id);
      return;
    }
    const r = recordRestart(this.history, now, this.intensity);
    this.history = r.history;
    if (r.exceeded) {
      void this.escalate(`${r.history.length} restarts within ${this.intensity.withinMs} ms (limit ${this.intensity.maxRestarts}); last: ${id}: ${message}`);
      return;
    }
    child.attempts = recordRestart(child.attempts, now, this.intensity).history;
    const backoff: BackoffSpec = { ...DEFAULT_BACKOFF, ...child.spec.backoff };
    const delayMs = backoffDelay(backoff, child.attempts.length);
    child.status = 'restarting';
    this.sys.emit({ type: 'child-restarting', supervisor: this.id, id, attempt: child.attempts.length, delayMs, at: now });
    child.timer = setTimeout(() => {
      child.timer = null;
      child.restarting = this.restartChild(child).finally(() => {
        child.restarting = null;
        const again = child.crashedDuringRestart;
        if (again !== null) {
          child.crashedDuringRestart = null;
          this.onChildCrash(id, cause, `crashed again while restarting: ${again}`);
        }
      });
    }, delayMs);
  }

  private async restartChild(child: Child): Promise<void> {
    if (this.status !== 'running') return;
    const id = child.spec.id;
    try {
      if (isSupervisorSpec(child.spec)) await this.startChild(child);
      else {
        await this.sys.restartActor(child.spec, this);
        markRunning(child);
      }
      this.sys.emit({ type: 'child-restarted', supervisor: this.id, id, attempt: child.attempts.length, at: Date.now() });
    } catch (err) {
      const { message } = describeError(err);
      child.crashedDuringRestart = message;
      this.sys.log.error({ supervisor: this.id, child: id, err: message }, 'restart failed');
    }
  }

  /** Too many restarts: stop everything below, then fail towards the parent. */
  private async escalate(reason: string): Promise<void> {
    // Failed from now on: crashes of the children still being stopped (several may come at
    // once, e.g. when their shared thread dies) must not escalate a second time.
    this.status = 'failed';
    this.sys.emit({ type: 'escalated', supervisor: this.id, reason, at: Date.now() });
    this.sys.log.error({ supervisor: this.id, reason }, 'restart intensity exceeded; escalating');
    await this.stopChildren();
    this.sys.unregister(this);
    if (this.parent) this.parent.onChildCrash(this.id, 'escalation', reason);
    else this.sys.rootFailed(`root supervisor ${this.id} gave up: ${reason}`);
  }

  /** Stop one child for good (not restarted). */
  async removeChild(id: string): Promise<void> {
    const child = this.children.get(id);
    if (!child) return;
    await this.stopChild(child, 'stopped');
    this.children.delete(id);
  }

  private stopChild(child: Child, reason: 'stopped' | 'shutdown' = 'shutdown'): Promise<void> {
    if (child.timer) clearTimeout(child.timer);
    child.timer = null;
    child.stopping ??= this.stopChildNow(child, reason);
    return child.stopping;
  }

  private async stopChildNow(child: Child, reason: 'stopped' | 'shutdown'): Promise<void> {
    // 'stopped' first: no crash report schedules another restart from now on; then let a
    // restart in progress finish, so the stop is not raced by a new instance coming up.
    child.status = 'stopped';
    if (child.restarting) await child.restarting.catch(() => undefined);
    const started = Date.now();
    let clean = true;
    if (child.node) await child.node.stop();
    else if (!isSupervisorSpec(child.spec)) clean = await this.sys.stopActor(child.spec.id, child.spec.shutdownMs ?? DEFAULT_SHUTDOWN_MS, reason);
    this.sys.emit({ type: 'child-stopped', supervisor: this.id, id: child.spec.id, clean, ms: Date.now() - started, at: Date.now() });
  }

  private async stopChildren(): Promise<void> {
    const all = [...this.children.values()].reverse();
    for (const child of all) await this.stopChild(child);
  }

  /** Ordered shutdown: children in reverse start order, each within its deadline. */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.status = 'stopping';
      await this.stopChildren();
      this.status = 'stopped';
      this.sys.unregister(this);
      this.sys.emit({ type: 'supervisor-stopped', supervisor: this.id, at: Date.now() });
    })();
    return this.stopped;
  }
}

/** Running now, unless it was stopped meanwhile or crashed again and has a restart scheduled. */
function markRunning(child: Child): void {
  if (child.status !== 'stopped' && !child.timer) child.status = 'running';
}
