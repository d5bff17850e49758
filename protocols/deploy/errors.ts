/**
 * Refusals of the deployment service. A refusal is `{status, code, message}`: the HTTP status the
 * front answers with, a stable machine code, and a message that names the field or the rule. The
 * body on the wire is the project's `{"error": {"code", "message"}}` (objstore's errorBody, reused
 * so that the two services cannot drift). Validators in this folder return `Result`s; inside, they
 * throw `Refused` and `attempt` turns it back into a result, so a nested check reads straight.
 * Pure.
 */
import { errorBody } from '../objstore/errors.js';

export type RefusalStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 502;

export type RefusalCode =
  /** a required field is absent (or the body is not a JSON object) */
  | 'MISSING_FIELD'
  /** a field is present but of the wrong type, range or form */
  | 'INVALID_FIELD'
  /** several environments match the branch and `environment` was not given */
  | 'AMBIGUOUS_ENVIRONMENT'
  | 'APP_NOT_FOUND'
  | 'ENVIRONMENT_NOT_FOUND'
  | 'DEPLOYMENT_NOT_FOUND'
  | 'CHART_NOT_FOUND'
  | 'VALUES_NOT_FOUND'
  /** job token verification failed */
  | 'JOB_TOKEN_INVALID'
  /** the chart tarball breaks a rule (layout, entry type, path, limit) */
  | 'BAD_CHART'
  /** the values file (or Chart.yaml) is not acceptable YAML */
  | 'BAD_YAML'
  /** the environment's IaC path does not resolve inside the repository */
  | 'IAC_PATH_OUTSIDE'
  /** a configuration conflict: duplicate target, cluster kind mismatch, unknown cluster */
  | 'CONFLICT'
  /** a status transition the machine does not allow (a bug in the caller, never a client error) */
  | 'ILLEGAL_TRANSITION'
  /** admin API (the HTTP front): no or an unknown bearer token (401), a token without the scope (403) */
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  /** admin API: no record with the id in the path (IaC repository, cluster, app, environment) */
  | 'NOT_FOUND'
  /** no endpoint at the path (404), or not with this method (405) */
  | 'NO_SUCH_ENDPOINT'
  | 'METHOD_NOT_ALLOWED'
  /** a request body above its cap */
  | 'BODY_TOO_LARGE'
  /** the CI job verifier (GitLab) cannot be reached or answers nonsense (502) */
  | 'VERIFIER_UNAVAILABLE';

export interface Refusal {
  status: RefusalStatus;
  code: RefusalCode;
  message: string;
}

export type Result<T> = { ok: true; value: T } | { ok: false; error: Refusal };

export class Refused extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.message);
    this.name = 'Refused';
  }
}

export function refuse(status: RefusalStatus, code: RefusalCode, message: string): never {
  throw new Refused({ status, code, message });
}

export const missing = (message: string): never => refuse(400, 'MISSING_FIELD', message);
export const invalid = (message: string): never => refuse(400, 'INVALID_FIELD', message);

/** Run a check that throws `Refused`; any other error is a bug and is rethrown. */
export function attempt<T>(check: () => T): Result<T> {
  try {
    return { ok: true, value: check() };
  } catch (e) {
    if (e instanceof Refused) return { ok: false, error: e.refusal };
    throw e;
  }
}

/** The value of a result, or throw its refusal (for composing results inside a check). */
export function unwrap<T>(r: Result<T>): T {
  if (!r.ok) throw new Refused(r.error);
  return r.value;
}

/** The JSON text of the error body for a refusal. */
export function refusalBody(r: Refusal): string {
  return errorBody(r.code, r.message);
}
