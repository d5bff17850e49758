/**
 * Git repository URLs: which forms are accepted, and the repository key under which an app is
 * found. CI jobs and admins spell one repository many ways (`https://GitLab.example.com/g/app.git`,
 * `git@gitlab.example.com:g/app`, `…/g/app/`); the key makes them one:
 *
 * - the scheme is dropped: https, http, ssh (also `git+ssh`, `ssh+git`), git and the scp-like
 *   `user@host:path` form all give the same key for the same host and path;
 * - the host is lower-cased; a default port (443, 80, 22, 9418 for its scheme) is dropped, any other
 *   port is kept (`host:8443/g/app`);
 * - the user name is dropped; a password or token in the URL is refused (credentials go separately);
 * - in the path, repeated slashes collapse, then one trailing '/', one trailing '.git' and again a
 *   trailing '/' are removed; the path keeps its case (file systems and most git servers are case
 *   sensitive); '.' and '..' segments, a query and a fragment are refused;
 * - `file:///srv/git/app.git` keys as its absolute path `/srv/git/app`; a file URL with a host is refused.
 *
 * Remote keys look like `gitlab.example.com/g/app`, file keys like `/srv/git/app`; the two never collide.
 * Pure.
 */
import { invalid } from './errors.js';
import { describe, textValue } from './fields.js';

export type RepoScheme = 'https' | 'http' | 'ssh' | 'git' | 'file';

export interface RepoUrl {
  scheme: RepoScheme;
  /** lower case; '' for file URLs */
  host: string;
  /** null when absent or the scheme's default */
  port: number | null;
  /** the normalised path: without leading '/' for remote URLs, absolute for file URLs */
  path: string;
  /** the matching key: `host[:port]/path`, or the absolute path of a file URL */
  key: string;
}

const SCHEMES: Readonly<Record<string, RepoScheme>> = {
  https: 'https',
  http: 'http',
  ssh: 'ssh',
  'git+ssh': 'ssh',
  'ssh+git': 'ssh',
  git: 'git',
  file: 'file',
};
const DEFAULT_PORT: Readonly<Record<RepoScheme, number>> = { https: 443, http: 80, ssh: 22, git: 9418, file: 0 };
const SCHEME_RE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
/** `[user@]host:path`, as git reads it: no slash before the first colon. */
const SCP_RE = /^(?:([^@/:]+)@)?([A-Za-z0-9.-]+):(?!\/\/)(.+)$/;
const HOST_RE = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$|^\[[0-9a-f:.]+\]$/;

/** Longest repository URL accepted. */
export const MAX_REPO_URL_LENGTH = 2048;

function normalisePath(raw: string, name: string): string {
  let p = raw.replace(/\/{2,}/g, '/');
  if (p.endsWith('/')) p = p.slice(0, -1);
  if (p.endsWith('.git')) p = p.slice(0, -4);
  if (p.endsWith('/')) p = p.slice(0, -1);
  const segments = p.replace(/^\//, '').split('/');
  if (segments.length === 1 && segments[0] === '') invalid(`${name} has no repository path`);
  for (const s of segments) {
    if (/^(\.|%2e){1,2}$/i.test(s)) invalid(`${name} must not contain '.' or '..' path segments`);
  }
  return p;
}

/** Parse and normalise a repository URL; `name` is the field reported in a refusal. */
export function parseRepoUrl(value: unknown, name = 'repoUrl'): RepoUrl {
  const text = textValue(value, name, { max: MAX_REPO_URL_LENGTH });
  if (/\s/.test(text)) return invalid(`${name} must not contain spaces`);
  const m = SCHEME_RE.exec(text);
  if (m) return parseSchemeUrl(text, (m[1] as string).toLowerCase(), name);
  const scp = SCP_RE.exec(text);
  if (scp) {
    const host = (scp[2] as string).toLowerCase();
    if (!HOST_RE.test(host)) return invalid(`${name} has an invalid host ${describe(scp[2])}`);
    if (/[?#]/.test(scp[3] as string)) return invalid(`${name} must not have a query or fragment`);
    const path = normalisePath((scp[3] as string).replace(/^\/+/, ''), name);
    return { scheme: 'ssh', host, port: null, path, key: `${host}/${path}` };
  }
  return invalid(`${name} must be a git URL (https://, http://, ssh://, git://, file:// or user@host:path); got ${describe(text)}`);
}

function parseSchemeUrl(value: string, rawScheme: string, name: string): RepoUrl {
  const scheme = SCHEMES[rawScheme];
  if (scheme === undefined) return invalid(`${name} has an unsupported scheme ${describe(rawScheme)} (https, http, ssh, git or file)`);
  // WHATWG URL would resolve dot segments silently: refuse them on the raw text first
  if (/\/(\.|%2e){1,2}(\/|$)/i.test(value.slice(rawScheme.length + 3))) return invalid(`${name} must not contain '.' or '..' path segments`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return invalid(`${name} is not a valid URL`);
  }
  if (url.search !== '' || url.hash !== '' || value.includes('?') || value.includes('#')) return invalid(`${name} must not have a query or fragment`);
  if (url.password !== '') return invalid(`${name} must not carry a password or token; give the credential separately`);
  if (scheme === 'file') {
    if (url.host !== '') return invalid(`${name}: a file URL must not name a host (file:///path)`);
    const path = normalisePath(url.pathname, name);
    return { scheme, host: '', port: null, path, key: path };
  }
  const host = url.hostname.toLowerCase();
  if (host === '' || !HOST_RE.test(host)) return invalid(`${name} has an invalid host ${describe(url.hostname)}`);
  const given = url.port === '' ? null : Number(url.port);
  const port = given === null || given === DEFAULT_PORT[scheme] ? null : given;
  const path = normalisePath(url.pathname.replace(/^\/+/, ''), name);
  return { scheme, host, port, path, key: `${host}${port === null ? '' : `:${port}`}/${path}` };
}

/** The matching key of a repository URL (see the header), or a refusal naming `name`. */
export function repoKey(value: unknown, name = 'repoUrl'): string {
  return parseRepoUrl(value, name).key;
}
