/**
 * The management API's background-maintenance endpoints: drain, rebalance, verify-volumes,
 * verify-runs, accept-loss and debug. Bodies are checked here (protocols/objstore/maintenance.ts)
 * and the work is asked of the scheduler actor; its refusals come back with their HTTP status.
 */
import { ActorError, type ActorRef } from '../../../runtime/index.js';
import { BodyError, parseAcceptLoss, parseEmpty, parseRebalanceStart, parseRebalanceTune, parseVerifyStart } from '../../../protocols/objstore/maintenance.js';
import type { SchedulerMsg, SchedulerProtocol } from '../../scheduler/messages.js';
import type { VolumeInfo } from '../../volume/messages.js';
import { StoreError, type StoreContext } from '../store/context.js';
import type { Volumes } from '../volumes.js';
import { readJsonObject, sendJson, type Reply } from './respond.js';
import { readBuffers } from '../store/get.js';

export interface MaintenanceDeps {
  ctx: StoreContext;
  volumes: Volumes;
  scheduler: ActorRef<SchedulerProtocol>;
}

async function ask<T extends SchedulerMsg['type']>(deps: MaintenanceDeps, msg: Extract<SchedulerMsg, { type: T }>): Promise<unknown> {
  try {
    return await deps.scheduler.request(msg as never, { timeoutMs: 30_000 });
  } catch (err) {
    if (err instanceof ActorError && err.appCode) {
      const status = (err.details as { status?: number } | undefined)?.status ?? 409;
      throw new StoreError(status, err.appCode, err.message);
    }
    if (err instanceof ActorError) throw new StoreError(503, 'SCHEDULER_UNAVAILABLE', `the maintenance scheduler did not answer: ${err.message}`);
    throw err;
  }
}

async function body(r: Reply): Promise<Record<string, unknown> | null> {
  return readJsonObject(r);
}

function parsed<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof BodyError) throw new StoreError(400, err.code, err.message);
    throw err;
  }
}

function volumeIdOf(raw: string): number {
  if (!/^\d+$/.test(raw)) throw new StoreError(400, 'INVALID_VOLUME_ID', `volume id must be a positive integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** Handle the request if it is one of these endpoints; false otherwise. */
export async function routeMaintenance(deps: MaintenanceDeps, r: Reply, method: string, parts: string[], q: URLSearchParams): Promise<boolean> {
  const [top, a, b] = parts;
  if (top === 'volumes' && a !== undefined && b === 'drain' && parts.length === 3) {
    const volumeId = volumeIdOf(a);
    if (method === 'POST') {
      const bd = await body(r);
      if (!bd) return true;
      parsed(() => parseEmpty(bd, 'POST /$/volumes/{id}/drain'));
      sendJson(r, 202, { drain: await ask(deps, { type: 'drainStart', volumeId }) });
      return true;
    }
    if (method === 'DELETE') {
      sendJson(r, 200, { drain: await ask(deps, { type: 'drainCancel', volumeId }) });
      return true;
    }
    if (method === 'GET') {
      sendJson(r, 200, { drain: await ask(deps, { type: 'drainGet', volumeId }) });
      return true;
    }
    throw new StoreError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on /$/volumes/{id}/drain (POST starts, GET shows, DELETE cancels)`);
  }
  if (top === 'rebalance' && a === undefined) {
    if (method === 'GET') sendJson(r, 200, await ask(deps, { type: 'rebalanceGet' }));
    else if (method === 'DELETE') sendJson(r, 200, await ask(deps, { type: 'rebalanceCancel' }));
    else if (method === 'POST' || method === 'PUT') {
      const bd = await body(r);
      if (!bd) return true;
      if (method === 'POST') sendJson(r, 202, await ask(deps, { type: 'rebalanceStart', ...parsed(() => parseRebalanceStart(bd)) }));
      else sendJson(r, 200, await ask(deps, { type: 'rebalanceTune', ...parsed(() => parseRebalanceTune(bd)) }));
    } else throw new StoreError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on /$/rebalance (GET, POST, PUT, DELETE)`);
    return true;
  }
  if (top === 'verify-volumes' && a === undefined) {
    if (method === 'GET') sendJson(r, 200, await ask(deps, { type: 'verifyGet' }));
    else if (method === 'DELETE') sendJson(r, 200, await ask(deps, { type: 'verifyStop' }));
    else if (method === 'POST') {
      const bd = await body(r);
      if (!bd) return true;
      const req = parsed(() => parseVerifyStart(bd));
      sendJson(r, 200, await ask(deps, { type: 'verifyStart', ...req, trigger: { kind: 'manual' } }));
    } else throw new StoreError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on /$/verify-volumes (GET, POST, DELETE)`);
    return true;
  }
  if (top === 'verify-runs' && a === undefined && method === 'GET') {
    const raw = q.get('limit');
    const limit = raw === null ? 100 : Number(raw);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new StoreError(400, 'INVALID_QUERY', `limit must be an integer from 1 to 10000; got ${JSON.stringify(raw)}`);
    sendJson(r, 200, { runs: await ask(deps, { type: 'verifyRuns', limit }) });
    return true;
  }
  if (top === 'faults' && a === 'accept-loss' && b === undefined && method === 'POST') {
    const bd = await body(r);
    if (!bd) return true;
    sendJson(r, 200, await ask(deps, { type: 'acceptLoss', ...parsed(() => parseAcceptLoss(bd)) }));
    return true;
  }
  if (top === 'debug' && a === undefined && method === 'GET') {
    const volumes = await Promise.all(
      deps.volumes.records(false).map(async (v) => {
        const ref = deps.ctx.volume(v.id);
        let info: VolumeInfo | null = null;
        if (ref) info = await ref.request({ type: 'info' }, { timeoutMs: 3000 }).catch(() => null);
        return { id: v.id, present: Boolean(ref), answered: Boolean(info), ioPriority: info?.priority ?? null, inflight: info?.inflight ?? null, counters: info?.counters ?? null };
      }),
    );
    sendJson(r, 200, { volumes, readBuffers: readBuffers(), scheduler: await ask(deps, { type: 'debug' }) });
    return true;
  }
  return false;
}
