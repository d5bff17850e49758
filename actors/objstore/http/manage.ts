/**
 * The management API under /$/: volumes, buckets, fileinfo, status, faults, block devices, stats,
 * verify-file, the freeze; background maintenance (drain, rebalance, verify, debug) is in
 * maintenance.ts. Endpoints of the spec not built yet answer 501.
 */
import type { HttpRequest, HttpResponse } from '../../../runtime/http/uws.js';
import { isValidBucketName, parseTarget } from '../../../protocols/objstore/paths.js';
import { listBlockDevices } from '../../volume/disks.js';
import { DEFAULT_POLICY, type BucketPolicy } from '../metadata.js';
import { StoreError, type StoreContext } from '../store/context.js';
import type { Volumes } from '../volumes.js';
import { deleteVolume, frozen, setFrozen, updateVolume } from './volume-admin.js';
import { bucketStats, storageStats } from './stats.js';
import { verifyObject } from '../store/verify.js';
import { readJsonObject, reply, sendError, sendJson, type Reply } from './respond.js';
import { routeMaintenance } from './maintenance.js';
import type { ActorRef } from '../../../runtime/index.js';
import type { SchedulerProtocol } from '../../scheduler/messages.js';

const LATER = new Set(['identify', 'encrypt', 'notify', 'ui']);

export function handleManage(ctx: StoreContext, volumes: Volumes, scheduler: ActorRef<SchedulerProtocol>, res: HttpResponse, req: HttpRequest): void {
  const method = req.getMethod().toUpperCase();
  const url = req.getUrl();
  const query = req.getQuery() ?? '';
  const r = reply(res);
  const parts = url.slice(3).split('/');
  const run = async () => {
    try {
      const q = new URLSearchParams(query);
      if (await routeMaintenance({ ctx, volumes, scheduler }, r, method, parts, q)) return;
      await route(ctx, volumes, scheduler, r, method, parts, url, q);
    } catch (err) {
      if (err instanceof StoreError) sendError(r, err.status, err.code, err.message, err.headers);
      else {
        ctx.log.error({ err: (err as Error).stack }, 'management request failed');
        sendError(r, 500, 'INTERNAL', (err as Error).message);
      }
    }
  };
  void run();
}

function volumeId(raw: string | undefined): number {
  if (!raw || !/^\d+$/.test(raw)) throw new StoreError(400, 'INVALID_VOLUME_ID', `volume id must be a positive integer, got ${JSON.stringify(raw ?? '')}`);
  return Number(raw);
}

async function route(ctx: StoreContext, volumes: Volumes, scheduler: ActorRef<SchedulerProtocol>, r: Reply, method: string, parts: string[], url: string, q: URLSearchParams): Promise<void> {
  const [top, a, b] = parts;
  const key = `${method} ${top}`;
  if (top === 'volumes' && a === undefined) {
    if (method === 'GET') {
      const includeDeleted = q.get('includeDeleted') === 'true';
      return sendJson(r, 200, { volumes: volumes.records(includeDeleted).map((v) => volumes.view(v)) });
    }
    if (method === 'POST') {
      const body = await readJsonObject(r);
      if (!body) return;
      const rec = await volumes.provision(body);
      return sendJson(r, 201, { volume: volumes.view(rec) });
    }
  }
  if (top === 'volumes' && a !== undefined && b === undefined && method === 'PUT') {
    const id = volumeId(a);
    const body = await readJsonObject(r);
    if (!body) return;
    const rec = await updateVolume(ctx, id, body);
    if (rec.isDeleted) await volumes.retire(id);
    return sendJson(r, 200, { volume: volumes.view(rec) });
  }
  if (top === 'volumes' && a !== undefined && b === undefined && method === 'DELETE') {
    const rec = await deleteVolume(ctx, volumeId(a));
    await volumes.retire(rec.id);
    return sendJson(r, 200, { volume: volumes.view(rec) });
  }
  if (top === 'maintenance-freeze' && a === undefined) {
    if (method === 'GET') return sendJson(r, 200, { frozen: frozen(ctx) });
    if (method === 'PUT') {
      const body = await readJsonObject(r);
      if (!body) return;
      const frozenNow = await setFrozen(ctx, body);
      // The scheduler reads the flag itself (and looks again every 2 s); this wakes it at once.
      await scheduler.request({ type: 'freezeChanged' }, { timeoutMs: 5000 }).catch(() => undefined);
      return sendJson(r, 200, { frozen: frozenNow });
    }
  }
  if (top === 'volumes' && a !== undefined && b === undefined && method === 'GET') {
    const rec = ctx.meta.volumes.get(volumeId(a));
    if (!rec) throw new StoreError(404, 'NO_SUCH_VOLUME', `no volume ${a}`);
    return sendJson(r, 200, { volume: await volumes.detail(rec) });
  }
  if (key === 'POST verify-file' && a !== undefined && b === undefined) {
    const t = parseTarget(`/${a}`);
    if (t.kind !== 'id') throw new StoreError(400, 'INVALID_OBJECT_ID', `${JSON.stringify(a)} is not an object id ('$' and 24 hex characters)`);
    const rec = ctx.meta.find(t);
    if (!rec) throw new StoreError(404, 'NOT_FOUND', `no object ${a}`);
    const body = await readJsonObject(r);
    if (!body) return;
    const unknown = Object.keys(body).filter((k) => k !== 'mode');
    if (unknown.length) throw new StoreError(400, 'UNKNOWN_FIELD', `unknown field(s): ${unknown.join(', ')} (the body is {"mode": "light"|"full"})`);
    const mode = body.mode ?? 'full';
    if (mode !== 'light' && mode !== 'full') throw new StoreError(400, 'INVALID_FIELD', `mode must be "light" or "full"; got ${JSON.stringify(mode)}`);
    return sendJson(r, 200, await verifyObject(ctx, rec, mode));
  }
  if (key === 'GET storage-stats' && a === undefined) return sendJson(r, 200, await storageStats(ctx));
  if (key === 'GET buckets' && a === 'stats' && b === undefined) return sendJson(r, 200, await bucketStats(ctx));
  if (key === 'GET buckets' && a === undefined) {
    const names = new Set<string>();
    for (const { key: k } of ctx.meta.buckets.getRange()) names.add(k);
    for (const { key: k } of ctx.meta.paths.getRange()) names.add(k.split('/')[1]!);
    const buckets = [...names].sort().map((name) => ({ name, ...ctx.meta.policy(name) }));
    return sendJson(r, 200, { buckets });
  }
  if (key === 'PUT buckets' && a !== undefined && b === 'policy' && parts.length === 3) {
    let name: string;
    try {
      name = decodeURIComponent(a);
    } catch {
      throw new StoreError(400, 'INVALID_BUCKET', `bucket name ${JSON.stringify(a)} is not valid percent-encoding`);
    }
    if (!isValidBucketName(name)) throw new StoreError(400, 'INVALID_BUCKET', `${JSON.stringify(name)} is not a valid bucket name`);
    const body = await readJsonObject(r);
    if (!body) return;
    const fields = ['publicRead', 'publicWrite', 'deleteProtected'] as const;
    const unknown = Object.keys(body).filter((k) => !(fields as readonly string[]).includes(k));
    if (unknown.length) throw new StoreError(400, 'UNKNOWN_FIELD', `unknown field(s): ${unknown.join(', ')} (allowed: ${fields.join(', ')})`);
    for (const f of fields) if (body[f] !== undefined && typeof body[f] !== 'boolean') throw new StoreError(400, 'INVALID_FIELD', `${f} must be a boolean`);
    const policy: BucketPolicy = { ...DEFAULT_POLICY, ...ctx.meta.policy(name) };
    for (const f of fields) if (typeof body[f] === 'boolean') policy[f] = body[f] as boolean;
    await ctx.meta.buckets.put(name, policy);
    return sendJson(r, 200, { bucket: { name, ...policy } });
  }
  if (key === 'GET fileinfo' && a !== undefined) {
    const rest = url.slice('/$/fileinfo'.length);
    const t = parseTarget(rest);
    if (t.kind === 'invalid') throw new StoreError(400, 'INVALID_PATH', t.reason);
    const rec = ctx.meta.find(t);
    if (!rec) throw new StoreError(404, 'NOT_FOUND', `${rest} does not exist`);
    const all = [...rec.dataVolumes, ...rec.parityVolumes];
    const slices = await Promise.all(
      all.map(async (volumeId, index) => {
        const ref = ctx.volume(volumeId);
        const path = ref ? await ref.request({ type: 'path', objectId: rec.id, index }).catch(() => null) : null;
        return { index, kind: index < rec.k ? 'data' : 'parity', volumeId, path, present: ref !== null };
      }),
    );
    return sendJson(r, 200, { object: rec, slices });
  }
  if (key === 'GET status' && a === undefined) {
    const recs = volumes.records(true);
    const by = (pred: (v: ReturnType<typeof volumes.view>) => boolean) => recs.map((v) => volumes.view(v)).filter(pred).map((v) => v.id);
    let stored = 0;
    let objects = 0;
    for (const { value } of ctx.meta.objects.getRange()) {
      stored += value.size;
      objects++;
    }
    let capacity = 0;
    let free = 0;
    for (const v of recs.map((x) => volumes.view(x))) {
      capacity += (v.bytesTotal as number | null) ?? 0;
      free += (v.bytesFree as number | null) ?? 0;
    }
    return sendJson(r, 200, {
      volumes: {
        writable: ctx.writable().map((v) => v.id),
        readOnly: by((v) => v.isReadOnly === true && v.isDeleted === false),
        unhealthy: by((v) => v.isHealthy === false),
        draining: by((v) => v.isDraining === true),
        missing: by((v) => v.isMissing === true),
        disabled: by((v) => v.isEnabled === false && v.isDeleted === false),
        deleted: by((v) => v.isDeleted === true),
      },
      objects,
      gbStored: stored / 1e9,
      gbCapacity: capacity / 1e9,
      gbFree: free / 1e9,
    });
  }
  if (key === 'GET faults' && a === undefined) {
    const faults = [];
    for (const { value } of ctx.meta.faults.getRange()) faults.push(value);
    return sendJson(r, 200, { faults });
  }
  if (key === 'GET blockDevices' && a === undefined) {
    const devices = await listBlockDevices();
    return sendJson(r, 200, { blockDevices: devices });
  }
  if (LATER.has(top ?? '') || (top === 'volumes' && a !== undefined) || (top === 'blockDevices' && a === 'reload' && b === undefined)) {
    throw new StoreError(501, 'NOT_IMPLEMENTED', `${method} ${url} is not implemented in this version yet`);
  }
  throw new StoreError(404, 'NO_SUCH_ENDPOINT', `no management endpoint ${method} ${url}`);
}
