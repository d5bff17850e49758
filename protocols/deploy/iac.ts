/**
 * The IaC repository side of a deploy, as rules: where an environment's chart may live in the
 * repository (its iacPath), the commit message a deploy writes, and finding that commit again.
 *
 * An iacPath is relative to the repository root, uses '/' and is normalised ('./' and repeated or
 * trailing slashes dropped). Refused: absolute paths, any '..' component (even one that would stay
 * inside: a path means what it says), a '.git' component in any case (git's own directory, also on
 * case-insensitive file systems), a backslash, control characters, and the root itself (a chart
 * replacing the whole repository would delete everything else in it).
 *
 * A chart lands at the iacPath without its top-level directory: `mychart/templates/a.yaml` of an
 * archive becomes `<iacPath>/templates/a.yaml`, and the whole directory is replaced (files of an
 * earlier chart that the new one lacks are removed).
 *
 * The commit message names the app, environment, version and job in its subject and in trailers,
 * and ends with a `Deployment-Id:` trailer, so that after a crash the service recognises a commit it
 * has already pushed and never pushes a second one. Pure.
 */
import { refuse } from './errors.js';
import { describe } from './fields.js';

/** Longest iacPath, in characters. */
export const MAX_IAC_PATH_LENGTH = 1024;

/** The normalised iacPath, or a refusal with `status` (400 INVALID_FIELD at configuration, 400 IAC_PATH_OUTSIDE when read back). */
export function iacPath(value: unknown, field = 'iacPath', code: 'INVALID_FIELD' | 'IAC_PATH_OUTSIDE' = 'INVALID_FIELD'): string {
  const bad = (why: string): never => refuse(400, code, `${field} ${why}; got ${describe(value)}`);
  if (typeof value !== 'string') return bad('must be a string');
  if (value === '') return bad('must not be empty');
  if (value.length > MAX_IAC_PATH_LENGTH) return bad(`is longer than ${MAX_IAC_PATH_LENGTH} characters`);
  if (/[\u0000-\u001f\u007f]/.test(value)) return bad('must not contain control characters');
  if (value.includes('\\')) return bad("must use '/' and contain no backslash");
  if (value.startsWith('/') || /^[A-Za-z]:/.test(value)) return bad('must be relative to the repository root, not absolute');
  const parts = value.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) return bad("must not contain '..': it has to resolve inside the repository");
  if (parts.some((p) => p.toLowerCase() === '.git')) return bad("must not contain a '.git' component");
  if (parts.length === 0) return bad('must name a directory below the repository root, not the root itself');
  return parts.join('/');
}

/**
 * Where each entry of a checked chart archive goes in the repository: `topDir/rest` → `iacPath/rest`
 * (the top directory itself maps to the iacPath). Paths come from chart-rules, already normalised.
 */
export function placeChart<E extends { path: string }>(iacPathValue: string, topDir: string, entries: readonly E[]): (E & { repoPath: string })[] {
  return entries.map((e) => {
    if (e.path !== topDir && !e.path.startsWith(`${topDir}/`)) throw new TypeError(`entry ${e.path} is not under ${topDir}`);
    return { ...e, repoPath: e.path === topDir ? iacPathValue : `${iacPathValue}/${e.path.slice(topDir.length + 1)}` };
  });
}

export interface CommitFacts {
  app: string;
  environment: string;
  version: string;
  jobId: string;
  /** the CI job's commit in the app repository, when known */
  sourceSha?: string;
  /** the normalised iacPath */
  iacPath: string;
  deploymentId: string;
}

const TRAILER = 'Deployment-Id';

/**
 * The commit message: a subject `deploy <app>/<environment> <version>`, a blank line, then one
 * trailer block: App, Environment, Version, Job, Source-Commit (when known), IaC-Path and last
 * Deployment-Id. Names and versions never contain line breaks (the validators refuse them).
 */
export function commitMessage(f: CommitFacts): string {
  const trailers = [
    `App: ${f.app}`,
    `Environment: ${f.environment}`,
    `Version: ${f.version}`,
    `Job: ${f.jobId}`,
    ...(f.sourceSha === undefined ? [] : [`Source-Commit: ${f.sourceSha}`]),
    `IaC-Path: ${f.iacPath}`,
    `${TRAILER}: ${f.deploymentId}`,
  ];
  for (const line of trailers) if (/[\r\n]/.test(line)) throw new TypeError(`commit trailer contains a line break: ${JSON.stringify(line)}`);
  return `deploy ${f.app}/${f.environment} ${f.version}\n\n${trailers.join('\n')}\n`;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The deployment id in a commit message's trailer block (its last paragraph, as git reads
 * trailers), lower-cased; null when there is none. The key matches in any case, like
 * git-interpret-trailers; a `Deployment-Id:` line in the body above the trailers does not count,
 * nor does a value that is not a UUID. With several, the last one wins.
 */
export function deploymentIdOf(message: string): string | null {
  const paragraphs = message.replace(/\r\n?/g, '\n').trimEnd().split(/\n[ \t]*\n/);
  if (paragraphs.length < 2) return null; // the subject alone has no trailers
  const last = paragraphs[paragraphs.length - 1] as string;
  let found: string | null = null;
  for (const line of last.split('\n')) {
    const m = /^([A-Za-z0-9-]+)[ \t]*:[ \t]*(.*?)[ \t]*$/.exec(line);
    if (m && (m[1] as string).toLowerCase() === TRAILER.toLowerCase() && UUID_RE.test(m[2] as string)) found = (m[2] as string).toLowerCase();
  }
  return found;
}
