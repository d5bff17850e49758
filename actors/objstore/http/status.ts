/**
 * Management API, the state of the store: GET /$/status (volume ids by state, bytes stored,
 * capacity, free), /$/storage-stats (counters, computed in stats.ts), /$/faults (slice faults
 * and their repair state) and /$/blockDevices (the disks found; reload is not built yet).
 * Background maintenance and its debug view are in maintenance.ts.
 */
import { listBlockDevices } from '../../volume/disks.js';
import { sendJson } from './respond.js';
import { notBuilt, route, type ManageRoute } from './route.js';
import { storageStats } from './stats.js';

export const statusRoutes: ManageRoute[] = [
  route('GET', '/$/status', ({ ctx, volumes, r }) => {
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
    sendJson(r, 200, {
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
  }),
  route('GET', '/$/storage-stats', async ({ ctx, r }) => sendJson(r, 200, await storageStats(ctx))),
  route('GET', '/$/faults', ({ ctx, r }) => {
    const faults = [];
    for (const { value } of ctx.meta.faults.getRange()) faults.push(value);
    sendJson(r, 200, { faults });
  }),
  route('GET', '/$/blockDevices', async ({ r }) => sendJson(r, 200, { blockDevices: await listBlockDevices() })),
  notBuilt('POST', '/$/blockDevices/reload'),
];
