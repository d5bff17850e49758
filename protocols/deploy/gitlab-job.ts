/**
 * The `gitlab` CI provider's rules, apart from the HTTP call (actors/deployer/job-auth.ts): GitLab
 * answers `GET <base>/api/v4/job` with header `JOB-TOKEN: <token>` with the token's job
 * ("Get job token's job", https://docs.gitlab.com/api/jobs/#get-job-tokens-job). The job is the
 * request's when its `id` equals `jobId` and the project path of its `web_url` (without
 * `/-/jobs/<id>`) is the request's repository (by key, repo-url.ts). The ref and commit come from
 * the job: `ref` (a tag job gives `refs/tags/<ref>`, which names no branch) and `pipeline.sha`
 * (else `commit.id`). Only the configured GitLab is ever asked: a repository on another host is
 * refused (401) before any request (`gitlabHostOf`). Pure.
 */
import { attempt, refuse, type Result } from './errors.js';
import { parseRepoUrl } from './repo-url.js';
import type { JobClaims } from './job-tokens.js';

const fail = (why: string): never => refuse(401, 'JOB_TOKEN_INVALID', `job token verification failed: ${why}`);

/** The host part of repository keys on the GitLab at `baseUrl` (`gitlab.example.com`, `127.0.0.1:8080`). */
export function gitlabHostOf(baseUrl: string): string {
  return new URL(baseUrl).host.toLowerCase();
}

/** Whether a repository key is on that GitLab (checked before asking it anything). */
export function onGitlab(repoKey: string, gitlabHost: string): boolean {
  return repoKey.startsWith(`${gitlabHost}/`);
}

/** The claims of GitLab's job answer for `expect`, or 401 naming what does not match. */
export function gitlabJobClaims(job: unknown, expect: { repoKey: string; jobId: string }): Result<Omit<JobClaims, 'exp'>> {
  return attempt(() => {
    if (typeof job !== 'object' || job === null) return fail('GitLab answered something that is not a job');
    const j = job as { id?: unknown; ref?: unknown; tag?: unknown; web_url?: unknown; pipeline?: { sha?: unknown }; commit?: { id?: unknown } };
    if (String(j.id) !== expect.jobId) return fail('the token belongs to another job');
    const web = typeof j.web_url === 'string' ? /^(.*)\/-\/jobs\/\d+\/?$/.exec(j.web_url) : null;
    if (web === null) return fail('GitLab\'s job has no web_url of a project');
    const project = attempt(() => parseRepoUrl(web[1], 'web_url'));
    if (!project.ok || project.value.key !== expect.repoKey) return fail('the token belongs to a job of another repository');
    if (typeof j.ref !== 'string' || j.ref === '') return fail('GitLab\'s job has no ref');
    const sha = typeof j.pipeline?.sha === 'string' ? j.pipeline.sha : typeof j.commit?.id === 'string' ? j.commit.id : '';
    return { repoKey: expect.repoKey, jobId: expect.jobId, ref: j.tag === true ? `refs/tags/${j.ref}` : j.ref, sha: sha.toLowerCase() };
  });
}
