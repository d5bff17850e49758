/**
 * The embedded GitOps reconciler for swarm (there is no Flux for swarm): it follows the branch of
 * every IaC repository that has environments with `swarm-service` targets on clusters not marked
 * `appliedElsewhere` (and that this service has pushed a deployment for), and applies what the
 * branch says to the targets' services.
 *
 * Every `intervalMs`, and at once when the runner has pushed (`kick`), per repository: fetch the
 * branch tip (in the repository's queue, never in the middle of a push); per environment, the
 * revision is the last commit that changed its iacPath; when a target has not had that revision
 * applied, the values.yaml of that commit is mapped to a ServiceSpec
 * (protocols/deploy/swarm-values.ts), stamped with the revision, and the service is created or
 * updated — unless it already carries the revision (after a restart, nothing is applied twice).
 * Values that cannot be mapped are a refusal of that (target, revision): the monitor fails the
 * target with the message at once instead of waiting for a pick-up that cannot come. A dockerd
 * that cannot be reached is retried at the next round.
 */
import type { Logger } from 'pino';
import { REVISION_LABEL } from '../../protocols/deploy/swarm-rollout.js';
import { serviceSpecFromValues } from '../../protocols/deploy/swarm-values.js';
import { parseValues, VALUES_FILE } from '../../protocols/deploy/values.js';
import type { IacPusher } from './iac-push.js';
import { git, gitBytes } from './git.js';
import { applies } from './metrics.js';
import type { DeployerStore, EnvironmentRecord, StoredTarget } from './store.js';
import { swarmApi } from './swarm-api.js';

export class SwarmReconciler {
  /** target id → the revision applied to (or refused for) it */
  private readonly applied = new Map<string, string>();
  private readonly refusals = new Map<string, { revision: string; message: string }>();
  private readonly rounds = new Map<number, { running: Promise<void>; again: boolean }>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: DeployerStore,
    private readonly pusher: IacPusher,
    private readonly log: Logger,
    private readonly signal: AbortSignal,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    const all = () => {
      for (const repo of this.store.iacRepos.getRange()) this.kick(repo.value.id);
    };
    this.timer = setInterval(all, this.intervalMs);
    this.signal.addEventListener('abort', () => this.stop(), { once: true });
    all();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Why `revision` cannot be applied to the target (its values), or null. */
  refusalFor(targetId: string, revision: string): string | null {
    const r = this.refusals.get(targetId);
    return r !== undefined && r.revision === revision ? r.message : null;
  }

  /** Reconcile one repository now (a round already running is followed by one more). */
  kick(repoId: number): Promise<void> {
    const round = this.rounds.get(repoId);
    if (round !== undefined) {
      round.again = true;
      return round.running;
    }
    const state = { running: Promise.resolve(), again: false };
    state.running = (async () => {
      do {
        state.again = false;
        await this.reconcile(repoId).catch((err: Error) => {
          if (!this.signal.aborted) this.log.warn({ err: err.message, iacRepoId: repoId }, 'swarm reconcile round failed; retried at the next round');
        });
      } while (state.again && !this.signal.aborted);
      this.rounds.delete(repoId);
    })();
    this.rounds.set(repoId, state);
    return state.running;
  }

  /** The swarm-service targets of an environment that this reconciler applies. */
  private ownTargets(env: EnvironmentRecord): StoredTarget[] {
    return env.targets.filter((t) => {
      const c = this.store.clusters.get(t.clusterId);
      return t.deployType === 'swarm-service' && c !== undefined && c.kind === 'swarm' && c.appliedElsewhere !== true;
    });
  }

  private async reconcile(repoId: number): Promise<void> {
    const repo = this.store.iacRepos.get(repoId);
    if (repo === undefined || this.signal.aborted) return;
    // environments that have had a deployment pushed: a repository nobody deploys to through
    // this service is not fetched every round
    const deployed = new Set<number>();
    for (const { value } of this.store.deployments.getRange()) if (value.commit !== null) deployed.add(value.environmentId);
    const envs = [...this.store.environments.getRange()].map((e) => e.value).filter((e) => e.iacRepoId === repoId && deployed.has(e.id) && this.ownTargets(e).length > 0);
    if (envs.length === 0) return;
    await this.pusher.read(repo, async (dir, tip) => {
      if (tip === null) return;
      for (const env of envs) {
        const revision = (await git(dir, ['log', '-1', '--format=%H', tip, '--', env.iacPath], {}, this.signal)).trim();
        if (revision === '') continue;
        const todo = this.ownTargets(env).filter((t) => this.applied.get(t.id) !== revision);
        if (todo.length === 0) continue;
        let values: Record<string, unknown>;
        try {
          const bytes = await gitBytes(dir, ['cat-file', 'blob', `${revision}:${env.iacPath}/${VALUES_FILE}`], {}, this.signal).catch(() => {
            throw new Error(`${env.iacPath}/${VALUES_FILE} is missing at ${revision.slice(0, 12)}`);
          });
          values = parseValues(bytes);
        } catch (err) {
          for (const t of todo) this.refuse(t, revision, `the values cannot be applied: ${(err as Error).message}`);
          continue;
        }
        for (const t of todo) await this.applyTarget(t, values, revision);
      }
    });
  }

  private refuse(t: StoredTarget, revision: string, message: string): void {
    applies.inc({ result: 'refused' });
    this.refusals.set(t.id, { revision, message });
    this.applied.set(t.id, revision);
    this.log.warn({ target: t.id, revision, message }, 'swarm reconcile refused');
  }

  private async applyTarget(t: StoredTarget, values: Record<string, unknown>, revision: string): Promise<void> {
    let spec;
    try {
      spec = serviceSpecFromValues(values, t, revision);
    } catch (err) {
      this.refuse(t, revision, `the values cannot be applied: ${(err as Error).message}`);
      return;
    }
    const cluster = this.store.clusters.get(t.clusterId);
    if (cluster === undefined) return;
    const api = swarmApi(cluster.endpoint);
    try {
      const current = await api.service(spec.Name);
      if (current?.Spec.Labels?.[REVISION_LABEL] === revision) {
        applies.inc({ result: 'unchanged' });
      } else {
        const how = await api.apply(spec);
        applies.inc({ result: how });
        this.log.info({ service: spec.Name, image: spec.TaskTemplate.ContainerSpec.Image, revision }, `swarm service ${how}`);
      }
      this.applied.set(t.id, revision);
      this.refusals.delete(t.id);
    } catch (err) {
      applies.inc({ result: 'error' });
      this.log.warn({ service: spec.Name, endpoint: cluster.endpoint, err: (err as Error).message }, 'applying the swarm service failed; retried at the next round');
    }
  }
}
