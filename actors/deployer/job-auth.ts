/**
 * Verifies the CI job of a deploy, chart or values request. A token of the `local` provider
 * (`hjt1.…`, protocols/deploy/job-tokens.ts) is checked offline; any other token goes to the
 * `gitlab` provider when DEPLOYER_GITLAB_URL is set: `GET <base>/api/v4/job` with `JOB-TOKEN`,
 * only for a repository on that GitLab's host (another host is 401 without any request), its
 * answer checked by protocols/deploy/gitlab-job.ts. GitLab answering 401/403 (an unknown or
 * finished job's token) is 401; GitLab not answering, or answering anything else, is 502
 * VERIFIER_UNAVAILABLE (not 500: the service is fine, its verifier is not).
 */
import { refuse, unwrap } from '../../protocols/deploy/errors.js';
import { verifyJobToken, type JobClaims } from '../../protocols/deploy/job-tokens.js';
import { gitlabHostOf, gitlabJobClaims, onGitlab } from '../../protocols/deploy/gitlab-job.js';
import type { JobRequest } from '../../protocols/deploy/api.js';

/** How long GitLab may take to answer. */
export const GITLAB_TIMEOUT_MS = 10_000;

export async function verifyJob(key: Uint8Array, gitlabUrl: string | null, req: JobRequest): Promise<Omit<JobClaims, 'exp'>> {
  const expect = { repoKey: req.repoKey, jobId: req.jobId };
  if (req.jobToken.startsWith('hjt1.') || gitlabUrl === null) return unwrap(verifyJobToken(key, req.jobToken, expect, Date.now()));
  if (!onGitlab(req.repoKey, gitlabHostOf(gitlabUrl))) return refuse(401, 'JOB_TOKEN_INVALID', `job token verification failed: repository ${req.repoKey} is not on the configured GitLab (${gitlabHostOf(gitlabUrl)})`);
  const url = new URL('api/v4/job', gitlabUrl.endsWith('/') ? gitlabUrl : `${gitlabUrl}/`);
  let res: Response;
  try {
    res = await fetch(url, { headers: { 'JOB-TOKEN': req.jobToken, accept: 'application/json' }, signal: AbortSignal.timeout(GITLAB_TIMEOUT_MS), redirect: 'error' });
  } catch (err) {
    return refuse(502, 'VERIFIER_UNAVAILABLE', `GitLab at ${url.origin} could not be reached to verify the job token: ${(err as Error).message}`);
  }
  if (res.status === 401 || res.status === 403) return refuse(401, 'JOB_TOKEN_INVALID', 'job token verification failed: GitLab does not know this job token (or the job has finished)');
  if (res.status !== 200) return refuse(502, 'VERIFIER_UNAVAILABLE', `GitLab at ${url.origin} answered ${res.status} to the job token check`);
  let job: unknown;
  try {
    job = await res.json();
  } catch {
    return refuse(502, 'VERIFIER_UNAVAILABLE', `GitLab at ${url.origin} answered the job token check with something that is not JSON`);
  }
  return unwrap(gitlabJobClaims(job, expect));
}
