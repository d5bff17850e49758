/**
 * Drives a deployment through the status machine (protocols/deploy/status.ts): validating (the
 * stored chart read and prepared again, its digest checked), pushing (iac-push.ts), pushed (the
 * commit recorded), monitoring. Every change is applied by the machine, written with its events
 * in one transaction (store.ts) and then published on `events$` for the event streams. At start,
 * every deployment that is not terminal is resumed from its stored status (`resumeStep`): a
 * resumed push first looks for its own `Deployment-Id:` commit, so it never commits twice.
 *
 * Rollout monitors arrive in part 2: until then a target whose cluster kind has no monitor fails
 * at once with a message saying so, and the deployment ends failed naming it (the machine's
 * outcome rule) — a clear terminal state, never stuck in monitoring.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { Subject } from 'rxjs';
import { attempt, Refused, unwrap } from '../../protocols/deploy/errors.js';
import { prepareChart, type PreparedChart } from '../../protocols/deploy/chart-files.js';
import { commitMessage, iacPath } from '../../protocols/deploy/iac.js';
import { applyChange, isTerminal, resumeStep, type Change, type DeploymentEvent } from '../../protocols/deploy/status.js';
import { DEPLOY_TYPES } from '../../protocols/deploy/targets.js';
import { readChart } from './chart-reader.js';
import { IacPusher, PushRefused } from './iac-push.js';
import type { DeployerStore, DeploymentRecord } from './store.js';
import { deploymentsTotal, pushSeconds } from './metrics.js';

export interface PublishedEvent {
  deploymentId: string;
  seq: number;
  event: DeploymentEvent;
}

/** What a target gets until its cluster kind has a rollout monitor (part 2). */
export function noMonitorMessage(deployType: keyof typeof DEPLOY_TYPES): string {
  return `no rollout monitor for ${DEPLOY_TYPES[deployType]} clusters yet (${deployType} targets are watched from part 2 of the deployment service)`;
}

export class Runner {
  readonly events$ = new Subject<PublishedEvent>();
  private readonly running = new Set<string>();

  constructor(
    private readonly store: DeployerStore,
    readonly pusher: IacPusher,
    private readonly log: Logger,
  ) {}

  /** Write a new deployment with its first events and start it. */
  async queue(rec: DeploymentRecord, events: readonly DeploymentEvent[]): Promise<void> {
    const stored = await this.store.recordDeployment(rec, events, 0);
    this.publish(stored.id, 0, events);
    this.start(stored.id);
  }

  /** Resume every deployment that is not terminal (at start). */
  resumeAll(): void {
    for (const d of this.store.listDeployments()) if (!isTerminal(d.status)) this.start(d.id);
  }

  start(id: string): void {
    if (this.running.has(id)) return;
    this.running.add(id);
    void this.drive(id)
      .catch(async (err) => {
        const message = err instanceof Refused || err instanceof PushRefused ? err.message : `deployment failed: ${(err as Error).message}`;
        if (!(err instanceof Refused || err instanceof PushRefused)) this.log.error({ err: (err as Error).stack, deployment: id }, 'deployment failed');
        await this.change(id, { kind: 'fail', message }).catch((e2) => this.log.error({ err: (e2 as Error).stack, deployment: id }, 'recording a failure failed'));
      })
      .finally(() => this.running.delete(id));
  }

  private publish(id: string, afterSeq: number, events: readonly DeploymentEvent[]): void {
    events.forEach((event, i) => this.events$.next({ deploymentId: id, seq: afterSeq + i + 1, event }));
  }

  /** Apply one change and record it with its events (one transaction), then publish them. */
  private async change(id: string, change: Change, extra: Partial<DeploymentRecord> = {}): Promise<DeploymentRecord> {
    const d = this.store.deployments.get(id);
    if (!d) throw new Error(`deployment ${id} is gone`);
    const applied = unwrap(applyChange({ ...d, ...extra }, change, Date.now()));
    const stored = await this.store.recordDeployment(applied.deployment, applied.events, d.lastSeq);
    if (isTerminal(stored.status)) deploymentsTotal.inc({ status: stored.status });
    this.publish(id, d.lastSeq, applied.events);
    return stored;
  }

  /** The stored chart, its digest checked, read and prepared again (the same rules as at upload). */
  private async prepare(d: DeploymentRecord): Promise<PreparedChart> {
    const bytes = await readFile(d.chartFile);
    const digest = createHash('sha256').update(bytes).digest('hex');
    if (digest !== d.chartDigest) throw new PushRefused(`the stored chart ${d.chartFile} does not match its digest (sha256 ${digest}, recorded ${d.chartDigest})`);
    const chart = await readChart(bytes, { keepContents: true });
    if (!chart.ok) throw new Refused(chart.error);
    return unwrap(attempt(() => prepareChart(chart.value, iacPath(d.iacPath, 'iacPath', 'IAC_PATH_OUTSIDE'), d.chartVersion)));
  }

  private async drive(id: string): Promise<void> {
    let d = this.store.deployments.get(id);
    if (!d) return;
    let step = resumeStep(d.status);
    if (step === 'validate' || step === 'push') {
      if (d.status === 'pending') d = await this.change(id, { kind: 'advance', to: 'validating', message: 'checking the chart' });
      const chart = await this.prepare(d);
      const repo = this.store.iacRepos.get(d.iacRepoId);
      if (!repo) throw new PushRefused(`IaC repository ${d.iacRepoId} no longer exists`);
      if (d.status === 'validating') d = await this.change(id, { kind: 'advance', to: 'pushing', message: `pushing ${d.chartVersion} to ${repo.name} at ${d.iacPath}` });
      const message = commitMessage({ app: d.appName, environment: d.environmentName, version: d.version, jobId: d.jobId, sourceSha: d.sha, iacPath: d.iacPath, deploymentId: d.id });
      const started = performance.now();
      const pushed = await this.pusher.push(repo, { deploymentId: d.id, iacPath: d.iacPath, chart, message }).catch((err: unknown) => {
        pushSeconds.observe({ outcome: 'refused' }, (performance.now() - started) / 1000);
        throw err;
      });
      pushSeconds.observe({ outcome: pushed.found ? 'found' : pushed.changed ? 'pushed' : 'unchanged' }, (performance.now() - started) / 1000);
      const sha = pushed.commit.slice(0, 12);
      const what = pushed.found
        ? `commit ${sha} of this deployment is already on ${repo.name} ${pushed.branch} (pushed before a restart)`
        : pushed.changed
          ? `pushed commit ${sha} to ${repo.name} ${pushed.branch}`
          : `the chart is already at ${repo.name} ${pushed.branch} ${sha}: nothing to commit`;
      d = await this.change(id, { kind: 'advance', to: 'pushed', message: what }, { commit: pushed.commit });
      step = 'monitor';
    }
    if (step === 'monitor') {
      d = await this.change(id, { kind: 'advance', to: 'monitoring', message: `watching ${d.targets.length} cluster target${d.targets.length === 1 ? '' : 's'}` });
      step = 'resume-monitors';
    }
    if (step === 'resume-monitors') {
      for (const t of d.targets) {
        if (isTerminal(t.status)) continue;
        d = await this.change(id, { kind: 'target', targetId: t.id, to: 'failed', message: noMonitorMessage(t.deployType) });
      }
    }
  }
}
