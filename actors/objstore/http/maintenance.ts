/**
 * Management API, background maintenance: drain, rebalance, verify-volumes, verify-runs,
 * accept-loss, the maintenance freeze and debug. Bodies are checked here
 * (protocols/objstore/maintenance.ts) and the work is asked of the scheduler actor; its
 * refusals (typed codes, SchedulerRefusal) are given their HTTP answer here (REFUSALS).
 */
import { ActorError, refusalOf } from '../../../runtime/index.js';
import { BodyError, parseAcceptLoss, parseEmpty, parseRebalanceStart, parseRebalanceTune, parseVerifyStart } from '../../../protocols/objstore/maintenance.js';
import type { SchedulerMsg, SchedulerProtocol, SchedulerRefusal, SchedulerReplies } from '../../scheduler/messages.js';
import type { VolumeInfo } from '../../volume/messages.js';
import { StoreError } from '../store/context.js';
import { readBuffers } from '../store/get.js';
import { readJsonObject, sendJson } from './respond.js';
import { route, volumeIdOf, type ManageCall, type ManageRoute } from './route.js';
import { frozen, setFrozen } from './volume-admin.js';

/**
 * The API's answer to each refusal of the scheduler: its status, and what the message gains
 * here (the scheduler names no route; the API tells the client which one helps).
 */
const REFUSALS: Readonly<Record<SchedulerRefusal, { status: number; hint?: string }>> = {
  NO_SUCH_VOLUME: { status: 404 },
  VOLUME_DELETED: { status: 409 },
  NOT_DRAINING: { status: 409 },
  NO_DRAIN: { status: 404 },
  REBALANCE_RUNNING: { status: 409, hint: ': PUT /$/rebalance retunes it, DELETE cancels it' },
  FROZEN: { status: 409, hint: ': PUT /$/maintenance-freeze {"frozen": false} first' },
  NO_REBALANCE: { status: 409, hint: ': POST /$/rebalance starts one' },
  NOT_FOUND: { status: 404 },
  NO_FAULT: { status: 404 },
};

/** What the API answers for a refusal of the scheduler. */
export function refusalError(code: SchedulerRefusal, message: string): StoreError {
  const { status, hint = '' } = REFUSALS[code];
  return new StoreError(status, code, `${message}${hint}`);
}

type Request = SchedulerMsg['type'] & keyof SchedulerReplies;

async function ask<T extends Request>({ scheduler }: ManageCall, msg: Extract<SchedulerMsg, { type: T }>): Promise<SchedulerReplies[T]> {
  try {
    return await scheduler.request<T>(msg, { timeoutMs: 30_000 });
  } catch (err) {
    const code = refusalOf<SchedulerProtocol>(err);
    if (code) throw refusalError(code, (err as Error).message);
    if (err instanceof ActorError) throw new StoreError(503, 'SCHEDULER_UNAVAILABLE', `the maintenance scheduler did not answer: ${err.message}`);
    throw err;
  }
}

function parsed<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof BodyError) throw new StoreError(400, err.code, err.message);
    throw err;
  }
}

export const maintenanceRoutes: ManageRoute[] = [
  route('POST', '/$/volumes/:id/drain', async (call, { id }) => {
    const volumeId = volumeIdOf(id);
    const bd = await readJsonObject(call.r);
    if (!bd) return;
    parsed(() => parseEmpty(bd, 'POST /$/volumes/{id}/drain'));
    sendJson(call.r, 202, { drain: await ask(call, { type: 'drainStart', volumeId }) });
  }),
  route('GET', '/$/volumes/:id/drain', async (call, { id }) => {
    sendJson(call.r, 200, { drain: await ask(call, { type: 'drainGet', volumeId: volumeIdOf(id) }) });
  }),
  route('DELETE', '/$/volumes/:id/drain', async (call, { id }) => {
    sendJson(call.r, 200, { drain: await ask(call, { type: 'drainCancel', volumeId: volumeIdOf(id) }) });
  }),

  route('GET', '/$/rebalance', async (call) => sendJson(call.r, 200, await ask(call, { type: 'rebalanceGet' }))),
  route('POST', '/$/rebalance', async (call) => {
    const bd = await readJsonObject(call.r);
    if (!bd) return;
    sendJson(call.r, 202, await ask(call, { type: 'rebalanceStart', ...parsed(() => parseRebalanceStart(bd)) }));
  }),
  route('PUT', '/$/rebalance', async (call) => {
    const bd = await readJsonObject(call.r);
    if (!bd) return;
    sendJson(call.r, 200, await ask(call, { type: 'rebalanceTune', ...parsed(() => parseRebalanceTune(bd)) }));
  }),
  route('DELETE', '/$/rebalance', async (call) => sendJson(call.r, 200, await ask(call, { type: 'rebalanceCancel' }))),

  route('GET', '/$/verify-volumes', async (call) => sendJson(call.r, 200, await ask(call, { type: 'verifyGet' }))),
  route('POST', '/$/verify-volumes', async (call) => {
    const bd = await readJsonObject(call.r);
    if (!bd) return;
    const req = parsed(() => parseVerifyStart(bd));
    sendJson(call.r, 200, await ask(call, { type: 'verifyStart', ...req, trigger: { kind: 'manual' } }));
  }),
  route('DELETE', '/$/verify-volumes', async (call) => sendJson(call.r, 200, await ask(call, { type: 'verifyStop' }))),

  route('GET', '/$/verify-runs', async (call) => {
    const raw = call.query.get('limit');
    const limit = raw === null ? 100 : Number(raw);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new StoreError(400, 'INVALID_QUERY', `limit must be an integer from 1 to 10000; got ${JSON.stringify(raw)}`);
    sendJson(call.r, 200, { runs: await ask(call, { type: 'verifyRuns', limit }) });
  }),

  route('POST', '/$/faults/accept-loss', async (call) => {
    const bd = await readJsonObject(call.r);
    if (!bd) return;
    sendJson(call.r, 200, await ask(call, { type: 'acceptLoss', ...parsed(() => parseAcceptLoss(bd)) }));
  }),

  route('GET', '/$/maintenance-freeze', ({ ctx, r }) => sendJson(r, 200, { frozen: frozen(ctx) })),
  route('PUT', '/$/maintenance-freeze', async ({ ctx, r, scheduler }) => {
    const body = await readJsonObject(r);
    if (!body) return;
    const frozenNow = await setFrozen(ctx, body);
    // The scheduler reads the flag itself (and looks again every 2 s); this wakes it at once.
    await scheduler.request({ type: 'freezeChanged' }, { timeoutMs: 5000 }).catch(() => undefined);
    sendJson(r, 200, { frozen: frozenNow });
  }),

  route('GET', '/$/debug', async (call) => {
    const { ctx, volumes: fleet } = call;
    const volumes = await Promise.all(
      fleet.records(false).map(async (v) => {
        const ref = ctx.volume(v.id);
        let info: VolumeInfo | null = null;
        if (ref) info = await ref.request({ type: 'info' }, { timeoutMs: 3000 }).catch(() => null);
        return { id: v.id, present: Boolean(ref), answered: Boolean(info), ioPriority: info?.priority ?? null, inflight: info?.inflight ?? null, counters: info?.counters ?? null };
      }),
    );
    sendJson(call.r, 200, { volumes, readBuffers: readBuffers(), scheduler: await ask(call, { type: 'debug' }) });
  }),
];
