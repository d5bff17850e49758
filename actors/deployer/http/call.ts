/**
 * What every handler of the deployment service's HTTP front receives (a `Call`), and the admin
 * bearer check: the token is looked up among the stored hashes, each compared in constant time
 * (admin-scopes.ts); no or an unknown token is 401, a valid one without the scope 403.
 */
import type { Logger } from 'pino';
import { refuse } from '../../../protocols/deploy/errors.js';
import { adminTokenMatches, permits, type Need } from '../../../protocols/deploy/admin-scopes.js';
import type { DeployerArgs } from '../messages.js';
import type { DeployerStore, TokenRecord } from '../store.js';
import type { Reply } from './respond.js';
import type { Runner } from '../runner.js';

/** What the handlers share: the store, the runner of deployments, the arguments, the log and the job token key. */
export interface Service {
  store: DeployerStore;
  runner: Runner;
  args: DeployerArgs;
  log: Logger;
  jobKey: Uint8Array;
}

export interface Call {
  svc: Service;
  r: Reply;
  method: string;
  url: string;
  query: URLSearchParams;
  /** request headers, read before the handler returned (uWS's request is gone after that) */
  authorization: string;
  contentType: string;
  lastEventId: string;
  /** the body, being read (POST and PUT with a JSON body), or null */
  body: Promise<Buffer> | null;
}

/** The token of `Authorization: Bearer <token>`, or 401. */
export function authenticate(call: Call): TokenRecord {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(call.authorization);
  if (!m) return refuse(401, 'UNAUTHORIZED', call.authorization === '' ? 'an admin token is required (Authorization: Bearer <token>)' : 'the Authorization header must be "Bearer <token>"');
  const token = m[1] as string;
  let found: TokenRecord | undefined;
  // every stored hash is compared, so the time does not tell how many tokens there are before the match
  for (const rec of call.svc.store.listTokens()) if (adminTokenMatches(token, rec.hash) && !found) found = rec;
  return found ?? refuse(401, 'UNAUTHORIZED', 'unknown admin token');
}

/** The caller's token when it allows `need`; else 401 or 403. */
export function authorize(call: Call, need: Need): TokenRecord {
  const token = authenticate(call);
  if (!permits(token.scopes, need)) {
    const what = need.kind === 'iac' ? need.iacRepoIds.map((id) => `iac:${id}`).join(' and ') : need.kind;
    refuse(403, 'FORBIDDEN', `this token (scopes ${token.scopes.join(', ')}) lacks the scope ${what}`);
  }
  return token;
}
