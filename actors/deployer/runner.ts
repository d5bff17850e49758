/**
 * Drives a deployment through the status machine (protocols/deploy/status.ts): validating (the
 * stored chart read and prepared again, its digest checked), pushing (iac-push.ts), pushed (the
 * commit recorded), monitoring. Every change is applied by the machine, written with its events
 * in one transaction (store.ts) and then published on `events$` for the event streams. At start,
 * every deployment that is not terminal is resumed from its stored status (`resumeStep`): a
 * resumed push first looks for its own `Deployment-Id:` commit, so it never commits twice.
 *
 * Monitoring: once pushed, the embedded swarm reconciler is kicked (swarm-reconciler.ts applies
 * the commit to the services), and every unfinished target is watched in parallel (monitor.ts)
 * against its pinned deadline; each outcome is one `target` change, and the machine makes the
 * parent's outcome once all are in. A resumed `monitoring` deployment just starts its monitors
 * again with the stored deadlines. A target type without a monitor yet (helm-release) fails at
 * once with a message saying so — a clear terminal state, never stuck in
 * monitoring. Changes of one deployment are applied one at a time
 * (monitors of several targets report concurrently).
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
import { deploymentsByStatus, deploymentsTotal, pushSeconds, rolloutSeconds } from './metrics.js';
import { DEPLOYMENT_STATUSES } from '../../protocols/deploy/status.js';
import type { DeploymentTarget } from '../../protocols/deploy/status.js';
import { k8sProbe, swarmServiceProbe, swarmStackProbe, watchTarget, type MonitorSettings, type Probe } from './monitor.js';
import type { SwarmReconciler } from './swarm-reconciler.js';

export interface PublishedEvent {
  deploymentId: string;
  seq: number;
  event: DeploymentEvent;
}

/** What a target gets when its deploy type has no rollout monitor yet. */
export function noMonitorMessage(deployType: keyof typeof DEPLOY_TYPES): string {
  return `no rollout monitor for ${deployType} targets (${DEPLOY_TYPES[deployType]} clusters) yet`;
}

export interface MonitoringParts {
  reconciler: SwarmReconciler | null;
  settings: MonitorSettings;
  /** the actor instance's: monitors stop without an outcome when it aborts */
  signal: AbortSignal;
}

export class Runner {
  readonly events$ = new Subject<PublishedEvent>();
  private readonly running = new Set<string>();
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: DeployerStore,
    readonly pusher: IacPusher,
    private readonly log: Logger,
    private readonly monitoring: MonitoringParts = { reconciler: null, settings: { pollMs: 1000, stabilityMs: 5000 }, signal: new AbortController().signal },
  ) {}

  /** Write a new deployment with its first events and start it. */
  async queue(rec: DeploymentRecord, events: readonly DeploymentEvent[]): Promise<void> {
    const stored = await this.store.recordDeployment(rec, events, 0);
    deploymentsByStatus.inc({ status: stored.status });
    this.publish(stored.id, 0, events);
    this.start(stored.id);
  }

  /** Resume every deployment that is not terminal (at start). */
  resumeAll(): void {
    this.countByStatus();
    for (const d of this.store.listDeployments()) if (!isTerminal(d.status)) this.start(d.id);
  }

  /** The `deployer_deployments{status}` gauge, from the store. */
  private countByStatus(): void {
    const counts = new Map<string, number>(DEPLOYMENT_STATUSES.map((s) => [s, 0]));
    for (const { value } of this.store.deployments.getRange()) counts.set(value.status, (counts.get(value.status) ?? 0) + 1);
    for (const [status, n] of counts) deploymentsByStatus.set({ status }, n);
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

  /** Apply one change and record it with its events (one transaction), then publish them; one change of a deployment at a time. */
  private change(id: string, change: Change, extra: Partial<DeploymentRecord> = {}): Promise<DeploymentRecord> {
    const run = (this.chains.get(id) ?? Promise.resolve()).catch(() => undefined).then(() => this.changeNow(id, change, extra));
    this.chains.set(id, run);
    void run.finally(() => {
      if (this.chains.get(id) === run) this.chains.delete(id);
    }).catch(() => undefined);
    return run;
  }

  private async changeNow(id: string, change: Change, extra: Partial<DeploymentRecord>): Promise<DeploymentRecord> {
    const d = this.store.deployments.get(id);
    if (!d) throw new Error(`deployment ${id} is gone`);
    const applied = unwrap(applyChange({ ...d, ...extra }, change, Date.now()));
    const stored = await this.store.recordDeployment(applied.deployment, applied.events, d.lastSeq);
    if (isTerminal(stored.status)) deploymentsTotal.inc({ status: stored.status });
    if (stored.status !== d.status) {
      deploymentsByStatus.dec({ status: d.status });
      deploymentsByStatus.inc({ status: stored.status });
    }
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
    let kicked = false;
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
      // the reconciler applies the commit while the monitors start
      if (this.monitoring.reconciler !== null) void this.monitoring.reconciler.kick(d.iacRepoId);
      kicked = true;
      step = 'monitor';
    }
    if (step === 'monitor') {
      d = await this.change(id, { kind: 'advance', to: 'monitoring', message: `watching ${d.targets.length} cluster target${d.targets.length === 1 ? '' : 's'}` });
      step = 'resume-monitors';
    }
    if (step === 'resume-monitors') {
      if (!kicked && this.monitoring.reconciler !== null) void this.monitoring.reconciler.kick(d.iacRepoId);
      const current = d;
      await Promise.all(current.targets.filter((t) => !isTerminal(t.status)).map((t) => this.monitorTarget(current, t)));
    }
  }

  /** The probe of a target, or null when its type has no monitor yet. */
  private probeOf(d: DeploymentRecord, t: DeploymentTarget): { probe: Probe; where: string } | null {
    const cluster = this.store.clusters.get(t.clusterId);
    if (cluster === undefined || d.commit === null) return null;
    if (t.deployType === 'swarm-service') {
      const reconciler = this.monitoring.reconciler;
      const refusal = () => (reconciler === null || cluster.appliedElsewhere === true ? null : reconciler.refusalFor(t.id, d.commit as string));
      return { probe: swarmServiceProbe(cluster.endpoint, t, d.commit, this.monitoring.settings.stabilityMs, refusal), where: `dockerd at ${cluster.endpoint}` };
    }
    if (t.deployType === 'swarm-stack') {
      return { probe: swarmStackProbe(cluster.endpoint, t, d.commit, this.monitoring.settings.stabilityMs), where: `dockerd at ${cluster.endpoint}` };
    }
    if (t.deployType === 'k8s-deployment' || t.deployType === 'flux-helmrelease') {
      return { probe: k8sProbe(cluster.endpoint, cluster.credential, t, d.commit, d.chartVersion), where: `the Kubernetes API at ${cluster.endpoint}` };
    }
    return null;
  }

  private async monitorTarget(d: DeploymentRecord, t: DeploymentTarget): Promise<void> {
    const probe = this.probeOf(d, t);
    const outcome = probe === null ? { to: 'failed' as const, message: noMonitorMessage(t.deployType) } : await watchTarget(t, probe.probe, this.monitoring.settings.pollMs, this.monitoring.signal, probe.where);
    if (outcome === null) return; // stopped: the checkpoint stays monitoring and a restart resumes it
    if (t.monitorStartedAt !== null) rolloutSeconds.observe({ deploy_type: t.deployType, outcome: outcome.to }, (Date.now() - t.monitorStartedAt) / 1000);
    await this.change(d.id, { kind: 'target', targetId: t.id, to: outcome.to, message: outcome.message });
  }
}
