/**
 * Which app and environment a CI request is for, exactly as the spec's error table says, for
 * deploy, chart and values alike. It runs after the job token is verified (so a stranger without a
 * valid token learns nothing about which repositories are configured: 401 comes before 404), and
 * takes the branch from the verified job's ref, never from the request:
 *
 * 1. the app whose repository key equals the request's (repo-url.ts) → else 404 APP_NOT_FOUND;
 * 2. the job's ref must name a branch (`main`, `refs/heads/main`) → else 404 ENVIRONMENT_NOT_FOUND;
 * 3. the app's environments on that branch; with `environment` given, the one of that name among
 *    them (an environment of another branch is not a match: a job cannot deploy a branch to an
 *    environment that follows a different one) → else 404 ENVIRONMENT_NOT_FOUND;
 * 4. without `environment`: exactly one → chosen; none → 404; several → 400 AMBIGUOUS_ENVIRONMENT,
 *    naming them. Names match exactly (case-sensitive). Pure.
 */
import { attempt, refuse, type Result } from './errors.js';
import { branchOfRef } from './git-refs.js';

export interface AppRecord {
  id: number;
  name: string;
  repoKey: string;
}

export interface EnvironmentRecord {
  id: number;
  appId: number;
  name: string;
  branch: string;
}

export interface SelectionRequest {
  repoKey: string;
  /** the verified job's ref */
  ref: string;
  environment?: string | undefined;
}

export function selectEnvironment<A extends AppRecord, E extends EnvironmentRecord>(
  apps: readonly A[],
  environments: readonly E[],
  req: SelectionRequest,
): Result<{ app: A; environment: E }> {
  return attempt(() => {
    const app = apps.find((a) => a.repoKey === req.repoKey);
    if (app === undefined) return refuse(404, 'APP_NOT_FOUND', `no app is configured for repository ${req.repoKey}`);
    const branch = branchOfRef(req.ref);
    if (branch === null) return refuse(404, 'ENVIRONMENT_NOT_FOUND', `the job's ref ${JSON.stringify(req.ref)} is not a branch; no environment matches it`);
    const onBranch = environments.filter((e) => e.appId === app.id && e.branch === branch);
    if (req.environment !== undefined) {
      const named = onBranch.find((e) => e.name === req.environment);
      if (named === undefined) {
        return refuse(404, 'ENVIRONMENT_NOT_FOUND', `app ${JSON.stringify(app.name)} has no environment ${JSON.stringify(req.environment)} for branch ${JSON.stringify(branch)}`);
      }
      return { app, environment: named };
    }
    if (onBranch.length === 0) return refuse(404, 'ENVIRONMENT_NOT_FOUND', `app ${JSON.stringify(app.name)} has no environment for branch ${JSON.stringify(branch)}`);
    if (onBranch.length > 1) {
      const names = onBranch.map((e) => JSON.stringify(e.name)).sort().join(', ');
      return refuse(400, 'AMBIGUOUS_ENVIRONMENT', `several environments of app ${JSON.stringify(app.name)} follow branch ${JSON.stringify(branch)} (${names}); say which with environment`);
    }
    return { app, environment: onBranch[0] as E };
  });
}
