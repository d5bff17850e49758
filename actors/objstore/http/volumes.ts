/**
 * Management API, volumes: list, provision, one volume, update (flags, label, comment) and soft
 * delete (the rules are in volume-admin.ts), identify (actors/volume/identify.ts), and the
 * in-place encrypt step (../encryption.ts; the rest of encryption is in encryption.ts). Drains
 * are in maintenance.ts.
 */
import { StoreError } from '../store/context.js';
import { readJsonObject, sendJson } from './respond.js';
import { route, volumeIdOf, type ManageRoute } from './route.js';
import { deleteVolume, updateVolume } from './volume-admin.js';
import { encryptVolume } from '../encryption.js';

export const volumeRoutes: ManageRoute[] = [
  route('GET', '/$/volumes', ({ volumes, r, query }) => {
    const includeDeleted = query.get('includeDeleted') === 'true';
    sendJson(r, 200, { volumes: volumes.records(includeDeleted).map((v) => volumes.view(v)) });
  }),
  route('POST', '/$/volumes', async ({ volumes, r }) => {
    const body = await readJsonObject(r);
    if (!body) return;
    const rec = await volumes.provision(body);
    sendJson(r, 201, { volume: volumes.view(rec) });
  }),
  route('GET', '/$/volumes/:id', async ({ ctx, volumes, r }, { id }) => {
    const rec = ctx.meta.volumes.get(volumeIdOf(id));
    if (!rec) throw new StoreError(404, 'NO_SUCH_VOLUME', `no volume ${id}`);
    sendJson(r, 200, { volume: await volumes.detail(rec) });
  }),
  route('PUT', '/$/volumes/:id', async ({ ctx, volumes, r }, params) => {
    const id = volumeIdOf(params.id);
    const body = await readJsonObject(r);
    if (!body) return;
    const rec = await updateVolume(ctx, id, body);
    if (rec.isDeleted) await volumes.retire(id);
    sendJson(r, 200, { volume: volumes.view(rec) });
  }),
  route('DELETE', '/$/volumes/:id', async ({ ctx, volumes, r }, { id }) => {
    const rec = await deleteVolume(ctx, volumeIdOf(id));
    await volumes.retire(rec.id);
    sendJson(r, 200, { volume: volumes.view(rec) });
  }),
  route('POST', '/$/volumes/:id/identify', ({ ctx, volumes, services, r }, params) => {
    const id = volumeIdOf(params.id);
    const rec = ctx.meta.volumes.get(id);
    if (!rec) throw new StoreError(404, 'NO_SUCH_VOLUME', `no volume ${id}`);
    if (rec.isDeleted) throw new StoreError(409, 'VOLUME_DELETED', `volume ${id} is deleted`);
    const device = volumes.presentDisks().find((d) => d.id === id)?.device;
    if (!device) throw new StoreError(409, 'VOLUME_MISSING', `volume ${id} has no disk present to identify (isMissing)`);
    if (!services.identify) throw new StoreError(503, 'NO_IDENTIFY', 'identify is not set up in this process');
    sendJson(r, 200, services.identify.start(id, device));
  }),
  route('DELETE', '/$/volumes/:id/identify', ({ ctx, services, r }, params) => {
    const id = volumeIdOf(params.id);
    if (!ctx.meta.volumes.get(id)) throw new StoreError(404, 'NO_SUCH_VOLUME', `no volume ${id}`);
    const wasOn = services.identify?.stop(id) ?? false;
    sendJson(r, 200, { volumeId: id, identifying: false, device: null, deadline: null, wasOn });
  }),
  route('POST', '/$/volumes/:id/encrypt', async ({ ctx, volumes, r }, { id }) => {
    const rec = await encryptVolume(ctx, volumes, volumeIdOf(id));
    sendJson(r, 200, { volume: volumes.view(rec) });
  }),
];
