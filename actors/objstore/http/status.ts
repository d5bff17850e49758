/**
 * Management API, the state of the store: GET /$/status (volume ids by state, bytes stored,
 * capacity, free), /$/storage-stats (counters, computed in stats.ts), /$/faults (slice faults
 * and their repair state, and the failed slice writes of PUTs per volume) and /$/blockDevices (the disks found, sorted, each with its volume;
 * reload rescans them first: actors/objstore/devices.ts).
 * Background maintenance and its debug view are in maintenance.ts.
 */
import { blockDeviceList } from '../devices.js';
import { DeviceSortError, parseDeviceSort, type DeviceSort } from '../../../protocols/objstore/devices.js';
import { StoreError } from '../store/context.js';
import { sendJson } from './respond.js';
import { route, type ManageRoute } from './route.js';
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
    // Slice writes of PUTs that failed on a volume (the PUT went on elsewhere: store/put.ts).
    const writeFaults = [];
    for (const { value } of ctx.meta.volumes.getRange()) {
      if (!value.writeFaults || value.isDeleted) continue;
      const { count, last } = value.writeFaults;
      writeFaults.push({ volumeId: value.id, count, code: last.code, message: last.message, objectId: last.objectId, sliceIndex: last.sliceIndex, lastSeenAt: new Date(last.at).toISOString() });
    }
    sendJson(r, 200, { faults, writeFaults });
  }),
  route('GET', '/$/blockDevices', async ({ volumes, r, query }) => sendJson(r, 200, { blockDevices: await blockDeviceList(volumes, sortOf(query)) })),
  route('POST', '/$/blockDevices/reload', async ({ volumes, services, r, query }) => {
    const by = sortOf(query);
    await services.hotplug?.rescan('reload', true);
    sendJson(r, 200, { blockDevices: await blockDeviceList(volumes, by) });
  }),
];

/** `sort` of /$/blockDevices, or 400 naming the bad value. */
function sortOf(query: URLSearchParams): DeviceSort {
  try {
    return parseDeviceSort(query.getAll('sort'));
  } catch (err) {
    if (err instanceof DeviceSortError) throw new StoreError(400, err.code, err.message);
    throw err;
  }
}
