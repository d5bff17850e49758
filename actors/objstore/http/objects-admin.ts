/**
 * Management API, one object: GET /$/fileinfo/{path or $id} (the slice layout and the on-disk
 * path of every slice) and POST /$/verify-file/{objectId} (check its slices now; store/verify.ts).
 */
import { parseTarget } from '../../../protocols/objstore/paths.js';
import { StoreError } from '../store/context.js';
import { verifyObject } from '../store/verify.js';
import { readJsonObject, sendJson } from './respond.js';
import { route, type ManageRoute } from './route.js';

export const objectAdminRoutes: ManageRoute[] = [
  route('GET', '/$/fileinfo/*', async ({ ctx, r }, params) => {
    const rest = `/${params['*']}`;
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
    sendJson(r, 200, { object: rec, slices });
  }),
  route('POST', '/$/verify-file/:objectId', async ({ ctx, r }, { objectId }) => {
    const t = parseTarget(`/${objectId}`);
    if (t.kind !== 'id') throw new StoreError(400, 'INVALID_OBJECT_ID', `${JSON.stringify(objectId)} is not an object id ('$' and 24 hex characters)`);
    const rec = ctx.meta.find(t);
    if (!rec) throw new StoreError(404, 'NOT_FOUND', `no object ${objectId}`);
    const body = await readJsonObject(r);
    if (!body) return;
    const unknown = Object.keys(body).filter((k) => k !== 'mode');
    if (unknown.length) throw new StoreError(400, 'UNKNOWN_FIELD', `unknown field(s): ${unknown.join(', ')} (the body is {"mode": "light"|"full"})`);
    const mode = body.mode ?? 'full';
    if (mode !== 'light' && mode !== 'full') throw new StoreError(400, 'INVALID_FIELD', `mode must be "light" or "full"; got ${JSON.stringify(mode)}`);
    sendJson(r, 200, await verifyObject(ctx, rec, mode));
  }),
];
