/**
 * Request bodies of the deployment service, checked field by field: the admin resources
 * (IaC repositories, clusters, apps, environments, local job tokens) and the CI requests (the
 * deploy form, the chart and values body). Each validator returns the typed value or a 400
 * refusal whose message names the field; unknown fields are refused.
 *
 * PUT is a full replacement: its body is the same as POST's and is checked by the same validator,
 * with one exception: credentials are write-only (never returned), so a PUT that leaves
 * `credential` out keeps the stored one, `credential: null` removes it and a string replaces it.
 * Pure.
 */
import { attempt, invalid, missing, type Result } from './errors.js';
import { describe, objectAt, onlyKnown, own, requiredText, idField, textValue, wholeNumber, type Body, type TextRule } from './fields.js';
import { branchName, branchProblem } from './git-refs.js';
import { chartVersion } from './chart-version.js';
import { iacPath } from './iac.js';
import { parseRepoUrl } from './repo-url.js';
import { CLUSTER_KINDS, targetList, type ClusterKind, type TargetConfig } from './targets.js';

/** Names of apps, environments, clusters and IaC repositories. */
export const NAME_RULE: TextRule = { max: 100 };
const CREDENTIAL_RULE: TextRule = { max: 16384, allowControl: true };
const JOB_ID_RULE: TextRule = { max: 128 };
const JOB_TOKEN_RULE: TextRule = { max: 4096 };

/** A request body as JSON text → a JSON object, or 400. */
export function parseJsonObject(text: string): Result<Body> {
  return attempt(() => {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      return invalid('body is not valid JSON');
    }
    return objectAt(v, 'body');
  });
}

/** undefined: keep (PUT) or none (POST); null: remove; string: set. */
export type CredentialChange = string | null | undefined;

function credential(o: Body): CredentialChange {
  const v = own(o, 'credential');
  return v === null ? null : v === undefined ? undefined : textValue(v, 'credential', CREDENTIAL_RULE);
}

function repoUrlField(o: Body, key: string): { url: string; key: string } {
  const repo = parseRepoUrl(own(o, key), key);
  return { url: own(o, key) as string, key: repo.key };
}

// ---- IaC repositories: POST/PUT /api/iac-repos {name, url, branch?, credential?}

export interface IacRepoInput {
  name: string;
  url: string;
  /** the branch to push to; null: the remote's default branch */
  branch: string | null;
  credential: CredentialChange;
}

export function checkIacRepo(body: unknown): Result<IacRepoInput> {
  return attempt(() => {
    const o = objectAt(body, 'body');
    onlyKnown(o, ['name', 'url', 'branch', 'credential'], 'body');
    const branch = own(o, 'branch');
    return {
      name: requiredText(o, 'name', 'body', NAME_RULE),
      url: repoUrlField(o, 'url').url,
      branch: branch === undefined || branch === null ? null : branchName(branch, 'branch'),
      credential: credential(o),
    };
  });
}

// ---- Clusters: POST/PUT /api/clusters {name, kind, endpoint, credential?, appliedElsewhere?}

export interface ClusterInput {
  name: string;
  kind: ClusterKind;
  endpoint: string;
  credential: CredentialChange;
  /** true: the user's own reconciler applies the IaC repository to this cluster; hostd only monitors (default false) */
  appliedElsewhere: boolean;
}

/** Endpoint schemes per kind: a Docker API socket or TCP/HTTP address; a Kubernetes API URL. */
const ENDPOINT_SCHEMES: Readonly<Record<ClusterKind, readonly string[]>> = {
  swarm: ['unix:', 'tcp:', 'http:', 'https:'],
  kubernetes: ['https:', 'http:'],
};

function endpoint(o: Body, kind: ClusterKind): string {
  const s = requiredText(o, 'endpoint', 'body', { max: 2048 });
  let url: URL | null = null;
  try {
    url = new URL(s);
  } catch {
    url = null;
  }
  const schemes = ENDPOINT_SCHEMES[kind];
  if (url === null || !schemes.includes(url.protocol)) invalid(`endpoint of a ${kind} cluster must be a URL with scheme ${schemes.map((x) => x.slice(0, -1)).join(', ')}; got ${describe(s)}`);
  const u = url as URL;
  if (u.protocol === 'unix:' ? u.pathname === '' || u.pathname === '/' : u.hostname === '') invalid(`endpoint has no ${u.protocol === 'unix:' ? 'socket path' : 'host'}; got ${describe(s)}`);
  if (u.password !== '' || u.username !== '') invalid('endpoint must not carry credentials; give them in credential');
  return s;
}

export function checkCluster(body: unknown): Result<ClusterInput> {
  return attempt(() => {
    const o = objectAt(body, 'body');
    onlyKnown(o, ['name', 'kind', 'endpoint', 'credential', 'appliedElsewhere'], 'body');
    const name = requiredText(o, 'name', 'body', NAME_RULE);
    const kind = own(o, 'kind');
    if (kind === undefined) missing('kind is required');
    if (!CLUSTER_KINDS.includes(kind as ClusterKind)) invalid(`kind must be one of ${CLUSTER_KINDS.join(', ')}; got ${describe(kind)}`);
    const elsewhere = own(o, 'appliedElsewhere');
    if (elsewhere !== undefined && elsewhere !== null && typeof elsewhere !== 'boolean') invalid(`appliedElsewhere must be true or false; got ${describe(elsewhere)}`);
    return { name, kind: kind as ClusterKind, endpoint: endpoint(o, kind as ClusterKind), credential: credential(o), appliedElsewhere: elsewhere === true };
  });
}

// ---- Apps: POST/PUT /api/apps {name, repoUrl}

export interface AppInput {
  name: string;
  repoUrl: string;
  /** the matching key of repoUrl (repo-url.ts); unique among apps */
  repoKey: string;
}

export function checkApp(body: unknown): Result<AppInput> {
  return attempt(() => {
    const o = objectAt(body, 'body');
    onlyKnown(o, ['name', 'repoUrl'], 'body');
    const name = requiredText(o, 'name', 'body', NAME_RULE);
    const repo = repoUrlField(o, 'repoUrl');
    return { name, repoUrl: repo.url, repoKey: repo.key };
  });
}

// ---- Environments: POST /api/apps/{appId}/environments, PUT …/{environmentId}

export interface EnvironmentInput {
  name: string;
  branch: string;
  iacRepoId: number;
  /** normalised (iac.ts) */
  iacPath: string;
  targets: TargetConfig[];
}

export function checkEnvironment(body: unknown): Result<EnvironmentInput> {
  return attempt(() => {
    const o = objectAt(body, 'body');
    onlyKnown(o, ['name', 'branch', 'iacRepoId', 'iacPath', 'targets'], 'body');
    const name = requiredText(o, 'name', 'body', NAME_RULE);
    const branch = own(o, 'branch');
    if (branch === undefined) missing('branch is required');
    const path = own(o, 'iacPath');
    if (path === undefined) missing('iacPath is required');
    return {
      name,
      branch: branchName(branch, 'branch'),
      iacRepoId: idField(o, 'iacRepoId', 'body'),
      iacPath: iacPath(path),
      targets: targetList(own(o, 'targets')),
    };
  });
}

// ---- Local CI job tokens: POST /api/job-tokens {repoUrl, jobId, ref, sha, ttlSecs?}

export interface JobTokenRequest {
  repoUrl: string;
  repoKey: string;
  jobId: string;
  ref: string;
  /** lower case */
  sha: string;
  ttlSecs: number;
}

export const JOB_TOKEN_TTL_DEFAULT_SECS = 3600;
export const JOB_TOKEN_TTL_MAX_SECS = 86400;

export function checkJobTokenRequest(body: unknown): Result<JobTokenRequest> {
  return attempt(() => {
    const o = objectAt(body, 'body');
    onlyKnown(o, ['repoUrl', 'jobId', 'ref', 'sha', 'ttlSecs'], 'body');
    const repo = repoUrlField(o, 'repoUrl');
    const jobId = requiredText(o, 'jobId', 'body', JOB_ID_RULE);
    const ref = requiredText(o, 'ref', 'body', { max: 255 });
    const refProblem = branchProblem(ref.replace(/^refs\//, ''));
    if (refProblem !== null) invalid(`ref ${refProblem}; got ${describe(ref)}`);
    const sha = requiredText(o, 'sha', 'body', { max: 64 });
    if (!/^(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$/.test(sha)) invalid(`sha must be a full commit id (40 or 64 hex digits); got ${describe(sha)}`);
    const ttl = own(o, 'ttlSecs');
    const ttlSecs = ttl === undefined ? JOB_TOKEN_TTL_DEFAULT_SECS : wholeNumber(ttl, 'ttlSecs', 1, JOB_TOKEN_TTL_MAX_SECS);
    return { repoUrl: repo.url, repoKey: repo.key, jobId, ref, sha: sha.toLowerCase(), ttlSecs };
  });
}

// ---- CI requests

/** What every CI request carries: the repository, the job and its token, and optionally the environment. */
export interface JobRequest {
  repoUrl: string;
  repoKey: string;
  jobId: string;
  jobToken: string;
  /** needed when a branch has several environments */
  environment?: string;
}

function jobRequest(o: Body): JobRequest {
  const repo = repoUrlField(o, 'repoUrl');
  const out: JobRequest = {
    repoUrl: repo.url,
    repoKey: repo.key,
    jobId: requiredText(o, 'jobId', 'body', JOB_ID_RULE),
    jobToken: requiredText(o, 'jobToken', 'body', JOB_TOKEN_RULE),
  };
  // absent, null and '' all mean "not given": CI scripts interpolate an optional variable (`-F environment=$ENV`)
  const given = own(o, 'environment');
  if (given !== undefined && given !== null && given !== '') out.environment = textValue(given, 'environment', NAME_RULE);
  return out;
}

/** POST /api/get/chart and /api/get/values: {repoUrl, jobId, jobToken, environment?}. */
export function checkJobBody(body: unknown): Result<JobRequest> {
  return attempt(() => {
    const o = objectAt(body, 'body');
    onlyKnown(o, ['repoUrl', 'jobId', 'jobToken', 'environment'], 'body');
    return jobRequest(o);
  });
}

/** One part of a multipart/form-data body, as the front's parser reports it (the file's bytes go to disk). */
export type FormPart = { name: string; kind: 'field'; value: string } | { name: string; kind: 'file'; filename: string | null };

export interface DeployForm extends JobRequest {
  /** as sent: a tag or a commit id */
  version: string;
  /** the SemVer 2 version written into Chart.yaml (chart-version.ts) */
  chartVersion: string;
}

const DEPLOY_PARTS = ['repoUrl', 'jobId', 'jobToken', 'environment', 'version', 'chart'] as const;

/**
 * POST /api/deploy: the parts of the form, in any order (the chart may come first). Refused:
 * an unknown part, a part given twice, `chart` sent as a text field, a text field sent as a file,
 * and every field rule of the JSON requests; `version` must map to a chart version.
 */
export function checkDeployForm(parts: readonly FormPart[]): Result<DeployForm> {
  return attempt(() => {
    const seen = new Map<string, FormPart>();
    for (const p of parts) {
      if (!(DEPLOY_PARTS as readonly string[]).includes(p.name)) invalid(`unknown field ${describe(p.name)} (allowed: ${DEPLOY_PARTS.join(', ')})`);
      if (seen.has(p.name)) invalid(`${p.name} is given more than once`);
      if (p.name === 'chart' ? p.kind !== 'file' : p.kind !== 'field') {
        invalid(p.name === 'chart' ? 'chart must be a file part (a .tgz upload), not a text field' : `${p.name} must be a text field, not a file`);
      }
      seen.set(p.name, p);
    }
    const fields: Body = {};
    for (const p of seen.values()) if (p.kind === 'field') fields[p.name] = p.value;
    const job = jobRequest(fields);
    const version = own(fields, 'version');
    if (version === undefined) missing('version is required');
    if (!seen.has('chart')) missing('chart is required');
    return { ...job, version: version as string, chartVersion: chartVersion(version, 'version') };
  });
}
