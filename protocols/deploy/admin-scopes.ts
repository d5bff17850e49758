/**
 * Admin bearer tokens and what they may do. The service issues tokens (`hostd deployer token
 * create`, `POST /api/tokens`): `hdt_` + 32 random bytes in base64url, shown once, stored only as
 * their SHA-256. A token carries scopes:
 *
 * - `admin`: everything (apps, clusters, IaC repositories, tokens, local job tokens, every environment);
 * - `iac:<iacRepoId>`: manage the environments whose destination is that IaC repository — the
 *   spec's "managing the setting needs the same repository permissions as editing the target
 *   destination": creating an environment needs the scope of its repository, updating one needs
 *   both the old and the new repository's scope, deleting one the old one's; also implies `read`;
 * - `read`: every GET (apps, environments, clusters without credentials, deployments) and
 *   `GET /api/session/me`.
 *
 * No token or an unknown one is 401; a valid token without the scope is 403. Pure: callers pass
 * the random bytes.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { invalid } from './errors.js';
import { describe, MAX_ID } from './fields.js';

export type Scope = 'admin' | 'read' | `iac:${number}`;

export type Need = { kind: 'admin' } | { kind: 'read' } | { kind: 'iac'; iacRepoIds: readonly number[] };

const PREFIX = 'hdt_';
const SCOPE_RE = /^iac:([1-9]\d{0,9})$/;

/** A new admin token from 32 random bytes. */
export function adminToken(random: Uint8Array): string {
  if (random.byteLength !== 32) throw new TypeError('an admin token needs 32 random bytes');
  return PREFIX + Buffer.from(random).toString('base64url');
}

/** What is stored: the SHA-256 of the token, hex. */
export function adminTokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Whether a presented token matches a stored hash, compared in constant time. */
export function adminTokenMatches(token: string, storedHash: string): boolean {
  if (!token.startsWith(PREFIX) || !/^[0-9a-f]{64}$/.test(storedHash)) return false;
  return timingSafeEqual(Buffer.from(adminTokenHash(token), 'hex'), Buffer.from(storedHash, 'hex'));
}

/** The `scopes` of a token-create body: a non-empty list of admin, read or iac:<id>, each once. */
export function scopeList(v: unknown, name = 'scopes'): Scope[] {
  if (!Array.isArray(v) || v.length === 0) return invalid(`${name} must be a non-empty array of scopes (admin, read, iac:<iacRepoId>); got ${describe(v)}`);
  const out: Scope[] = [];
  v.forEach((s, i) => {
    const m = typeof s === 'string' ? SCOPE_RE.exec(s) : null;
    if (s !== 'admin' && s !== 'read' && (m === null || Number(m[1]) > MAX_ID)) invalid(`${name}[${i}] must be admin, read or iac:<iacRepoId>; got ${describe(s)}`);
    if (out.includes(s as Scope)) invalid(`${name}[${i}] repeats ${describe(s)}`);
    out.push(s as Scope);
  });
  return out;
}

/** Whether `scopes` allow `need`. */
export function permits(scopes: readonly Scope[], need: Need): boolean {
  if (scopes.includes('admin')) return true;
  if (need.kind === 'admin') return false;
  if (need.kind === 'read') return scopes.includes('read') || scopes.some((s) => s.startsWith('iac:'));
  return need.iacRepoIds.every((id) => scopes.includes(`iac:${id}`));
}

/** The need of an environment write: create (new repository), update (old and new), delete (old). */
export function environmentNeed(oldIacRepoId: number | null, newIacRepoId: number | null): Need {
  const ids = [oldIacRepoId, newIacRepoId].filter((x): x is number => x !== null);
  return { kind: 'iac', iacRepoIds: [...new Set(ids)] };
}
