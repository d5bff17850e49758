/**
 * Management API, snapshots of the record database (journal/snapshots.ts): the list with each
 * snapshot's id, time, counts, checksum and status, the journal's health beside it, and taking
 * one on demand. `POST /$/snapshots` answers 202 with the snapshot started (or the one already
 * running, joined); with `?wait=true` it answers when the snapshot is done: 201 once it is
 * stored, read back and checked, 500 SNAPSHOT_FAILED with why otherwise.
 */
import { StoreError } from '../store/context.js';
import { readJsonObject, sendJson } from './respond.js';
import { route, type ManageCall, type ManageRoute } from './route.js';

function snapshotsOf(call: ManageCall) {
  const s = call.services.snapshots;
  if (!s) throw new StoreError(503, 'SNAPSHOTS_UNAVAILABLE', 'snapshots are not available in this store (no snapshot service)');
  return s;
}

export const snapshotRoutes: ManageRoute[] = [
  route('GET', '/$/snapshots', async (call) => {
    const s = snapshotsOf(call);
    sendJson(call.r, 200, { snapshots: await s.list(), running: s.running, journal: call.services.journal?.status() ?? { enabled: false } });
  }),
  route('POST', '/$/snapshots', async (call) => {
    const s = snapshotsOf(call);
    const body = await readJsonObject(call.r);
    if (!body) return;
    if (Object.keys(body).length) throw new StoreError(400, 'UNKNOWN_FIELD', `POST /$/snapshots takes no fields (got ${Object.keys(body).join(', ')})`);
    const wait = call.query.get('wait');
    if (wait !== null && wait !== 'true' && wait !== 'false') throw new StoreError(400, 'INVALID_QUERY', `wait must be true or false, got ${JSON.stringify(wait)}`);
    const { started, done } = s.take();
    if (wait !== 'true') return sendJson(call.r, 202, { snapshot: started });
    const v = await done;
    if (v.status !== 'good') throw new StoreError(500, 'SNAPSHOT_FAILED', `snapshot ${v.id} failed: ${v.error ?? 'unknown error'}`);
    sendJson(call.r, 201, { snapshot: v });
  }),
];
