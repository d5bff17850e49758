/**
 * The IaC push: a prepared chart (protocols/deploy/chart-files.ts) committed at the environment's
 * iacPath of its IaC repository and pushed, one push at a time per repository.
 *
 * Each repository has a working clone under `<stateDir>/deployer/iac/<iacRepoId>`. A push:
 * fetches the branch (the repository's, else the remote's default), looks for a commit whose
 * `Deployment-Id:` trailer is this deployment's (a retry after a crash finds its own commit and
 * does not commit twice), resets the clone to the remote tip, replaces the iacPath with the chart,
 * commits (nothing changed: no commit, the deployment succeeds on the current tip) and pushes. A
 * push refused as not fast-forward (someone pushed in between) is retried on the new tip —
 * fetched, and the chart applied again on it, which is the rebase of a commit that replaces one
 * directory and so cannot conflict — at most MAX_ATTEMPTS times. A push a hook refuses fails with
 * the hook's message (the `remote:` lines git prints).
 */
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { deploymentIdOf } from '../../protocols/deploy/iac.js';
import type { PreparedChart } from '../../protocols/deploy/chart-files.js';
import { credentialEnv, git, GitError } from './git.js';
import type { IacRepoRecord } from './store.js';

/** Where the clone keeps the remote branch's tip as last fetched. */
const TIP = 'refs/remotes/origin/deploy-tip';

/** Tries of one push when others keep landing first. */
export const MAX_ATTEMPTS = 5;
/** How far back on the branch a deployment's own commit is looked for. */
const OWN_COMMIT_DEPTH = 200;

export interface PushJob {
  deploymentId: string;
  iacPath: string;
  chart: PreparedChart;
  message: string;
}

export interface PushResult {
  /** the commit on the remote branch that holds the chart */
  commit: string;
  /** false: the chart was already there (no new commit) */
  changed: boolean;
  /** true: an earlier try of this deployment had pushed it (a resumed push) */
  found: boolean;
  branch: string;
}

/** A push the remote refused for good (a hook, permissions); the message is git's account of it. */
export class PushRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PushRefused';
  }
}

/** The `remote:` lines of a refused push (a hook's output), else git's last error lines. */
export function refusalMessage(stderr: string): string {
  const remote = stderr
    .split('\n')
    .filter((l) => l.startsWith('remote:'))
    .map((l) => l.slice('remote:'.length).trim())
    .filter((l) => l !== '');
  if (remote.length > 0) return `the IaC repository refused the push: ${remote.join(' ')}`;
  const lines = stderr.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('To '));
  return `the IaC repository refused the push: ${lines.slice(-3).join(' ')}`;
}

const isNonFastForward = (stderr: string) => /\[rejected\][^\n]*\((fetch first|non-fast-forward)\)/.test(stderr);

export class IacPusher {
  private readonly queues = new Map<number, Promise<unknown>>();
  /** clones used since this process started (stale locks are removed at first use) */
  private readonly opened = new Set<number>();

  /** `signal`: the actor instance's; its gits are killed when it ends (stop, crash, restart). */
  constructor(
    private readonly root: string,
    private readonly signal?: AbortSignal,
  ) {}

  private git(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
    return git(cwd, args, env, this.signal);
  }

  /** Run `job` on `repo` after everything already queued on that repository. */
  push(repo: IacRepoRecord, job: PushJob): Promise<PushResult> {
    return this.enqueue(repo.id, () => this.pushNow(repo, job));
  }

  /**
   * Read the remote branch's tip (fetched now) with `fn`, in the repository's queue (a fetch
   * moves the clone's refs, so it must not run in the middle of a push); `tip` is null when the
   * branch does not exist yet.
   */
  read<T>(repo: IacRepoRecord, fn: (dir: string, tip: string | null) => Promise<T>): Promise<T> {
    return this.enqueue(repo.id, async () => {
      const dir = await this.clone(repo);
      const exists = await this.fetch(dir, await this.branchOf(dir, repo), repo);
      return fn(dir, exists ? TIP : null);
    });
  }

  private enqueue<T>(repoId: number, fn: () => Promise<T>): Promise<T> {
    const before = this.queues.get(repoId) ?? Promise.resolve();
    const run = before.catch(() => undefined).then(fn);
    this.queues.set(repoId, run);
    void run
      .finally(() => {
        if (this.queues.get(repoId) === run) this.queues.delete(repoId);
      })
      .catch(() => undefined);
    return run;
  }

  /** Find this deployment's own commit on the remote branch (a resumed push), without pushing. */
  async findOwn(repo: IacRepoRecord, deploymentId: string): Promise<string | null> {
    const dir = await this.clone(repo);
    const branch = await this.branchOf(dir, repo);
    if (!(await this.fetch(dir, branch, repo))) return null;
    return this.ownCommit(dir, deploymentId);
  }

  private async pushNow(repo: IacRepoRecord, job: PushJob): Promise<PushResult> {
    const dir = await this.clone(repo);
    const branch = await this.branchOf(dir, repo);
    for (let attempt = 1; ; attempt++) {
      const exists = await this.fetch(dir, branch, repo);
      if (exists) {
        const own = await this.ownCommit(dir, job.deploymentId);
        if (own !== null) return { commit: own, changed: true, found: true, branch };
        await this.git(dir, ['checkout', '-q', '-f', '-B', 'deploy', TIP]);
      } else {
        // an empty remote: the first commit of the branch
        await this.git(dir, ['checkout', '-q', '-f', '--orphan', `deploy-${Date.now()}`]);
        await this.git(dir, ['rm', '-r', '-q', '-f', '--cached', '--ignore-unmatch', '.']);
      }
      await this.git(dir, ['clean', '-q', '-f', '-d', '-x']);
      await this.place(dir, job);
      await this.git(dir, ['add', '-A', '--', job.iacPath]);
      const changed = await this.git(dir, ['diff', '--cached', '--quiet']).then(() => false, () => true);
      // nothing to commit: the deployment's revision is the commit that last changed its iacPath
      // (what the swarm reconciler stamps on the services), not the branch tip
      if (!changed && exists) return { commit: (await this.git(dir, ['log', '-1', '--format=%H', 'HEAD', '--', job.iacPath])).trim(), changed: false, found: false, branch };
      const msgFile = join(dir, '.git', 'DEPLOY_MSG');
      await writeFile(msgFile, job.message);
      await this.git(dir, ['commit', '-q', '--no-verify', '-F', msgFile]);
      const commit = (await this.git(dir, ['rev-parse', 'HEAD'])).trim();
      try {
        await this.git(dir, ['push', '-q', 'origin', `HEAD:refs/heads/${branch}`], credentialEnv(repo.url, repo.credential));
        return { commit, changed: true, found: false, branch };
      } catch (err) {
        if (!(err instanceof GitError)) throw err;
        if (isNonFastForward(err.stderr) && attempt < MAX_ATTEMPTS) continue;
        if (isNonFastForward(err.stderr)) throw new PushRefused(`the IaC branch ${branch} kept moving: ${MAX_ATTEMPTS} pushes were overtaken by others`);
        throw new PushRefused(refusalMessage(err.stderr));
      }
    }
  }

  /** The working clone of `repo` (made on first use; the remote URL follows the record). */
  private async clone(repo: IacRepoRecord): Promise<string> {
    const dir = join(this.root, String(repo.id));
    if (!existsSync(join(dir, '.git'))) {
      // Made beside its place and renamed into it: a daemon killed half-way (after `git init`,
      // before `remote add`) leaves a `.new` directory, never a clone without its remote.
      const fresh = `${dir}.new`;
      await rm(dir, { recursive: true, force: true });
      await rm(fresh, { recursive: true, force: true });
      await mkdir(fresh, { recursive: true });
      await this.git(fresh, ['init', '-q']);
      await this.git(fresh, ['remote', 'add', 'origin', repo.url]);
      await rename(fresh, dir);
    } else {
      if (!this.opened.has(repo.id)) {
        // a git killed with the daemon (kill -9) leaves its lock; pushes to one repository run one
        // at a time and this process is the clone's only user, so a lock found now is stale
        for (const lock of ['index.lock', 'HEAD.lock', 'config.lock', 'shallow.lock']) await rm(join(dir, '.git', lock), { force: true });
      }
      await this.git(dir, ['remote', 'set-url', 'origin', repo.url]);
    }
    this.opened.add(repo.id);
    return dir;
  }

  /** The repository's branch, else the remote's default branch (main for an empty remote). */
  private async branchOf(dir: string, repo: IacRepoRecord): Promise<string> {
    if (repo.branch !== null) return repo.branch;
    const out = await this.git(dir, ['ls-remote', '--symref', 'origin', 'HEAD'], credentialEnv(repo.url, repo.credential));
    const m = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(out);
    return m ? (m[1] as string) : 'main';
  }

  /** Fetch the branch's tip into refs/remotes/origin/deploy-tip; false when the branch does not exist yet. */
  private async fetch(dir: string, branch: string, repo: IacRepoRecord): Promise<boolean> {
    const env = credentialEnv(repo.url, repo.credential);
    const tip = await this.git(dir, ['ls-remote', '--heads', 'origin', `refs/heads/${branch}`], env);
    if (tip.trim() === '') return false;
    await this.git(dir, ['fetch', '-q', '--no-tags', '--force', 'origin', `+refs/heads/${branch}:${TIP}`], env);
    return true;
  }

  private async ownCommit(dir: string, deploymentId: string): Promise<string | null> {
    const out = await this.git(dir, ['log', `-n${OWN_COMMIT_DEPTH}`, '--format=%H%x1f%B%x1e', TIP]);
    for (const rec of out.split('\x1e')) {
      const [sha, message] = rec.replace(/^\n/, '').split('\x1f');
      if (sha && message !== undefined && deploymentIdOf(message) === deploymentId) return sha;
    }
    return null;
  }

  /** Replace the iacPath with the chart (files of an older chart that this one lacks go). */
  private async place(dir: string, job: PushJob): Promise<void> {
    await rm(join(dir, job.iacPath), { recursive: true, force: true });
    for (const d of job.chart.dirs) await mkdir(join(dir, d), { recursive: true });
    for (const f of job.chart.files) {
      await mkdir(join(dir, f.repoPath, '..'), { recursive: true });
      await writeFile(join(dir, f.repoPath), f.data);
    }
  }
}
