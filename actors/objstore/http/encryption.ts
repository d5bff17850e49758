/**
 * Management API, encryption at rest (beyond the spec's `encrypt` on POST /$/volumes and POST
 * /$/volumes/{id}/encrypt, which are in volumes.ts): the state of the keys, the fleet setting
 * encryptNewVolumes, the recovery passphrase shown once and rotated, and recovery of a lost key
 * file with the passphrase. The rules are in ../keys.ts and ../encryption.ts.
 */
import { recoverKeyFile, rotatePassphrase } from '../encryption.js';
import { StoreError } from '../store/context.js';
import { readJsonObject, sendJson } from './respond.js';
import { route, type ManageRoute } from './route.js';

export const encryptionRoutes: ManageRoute[] = [
  route('GET', '/$/encryption', ({ volumes, r }) => {
    const encrypted = volumes.records(false).filter((v) => v.encrypted);
    sendJson(r, 200, {
      encryptNewVolumes: volumes.encryptNewVolumes(),
      ...volumes.keys.view(),
      volumes: encrypted.map((v) => ({ id: v.id, keyGen: v.keyGen ?? null, isLocked: volumes.locked.has(v.id), lockedReason: volumes.locked.get(v.id)?.reason ?? null, isMissing: !volumes.diskOf(v.id) })),
    });
  }),
  route('PUT', '/$/encryption', async ({ ctx, volumes, r }) => {
    const body = await readJsonObject(r);
    if (!body) return;
    const unknown = Object.keys(body).filter((k) => k !== 'encryptNewVolumes');
    if (unknown.length) throw new StoreError(400, 'UNKNOWN_FIELD', `unknown field(s): ${unknown.join(', ')} (allowed: encryptNewVolumes)`);
    if (typeof body.encryptNewVolumes !== 'boolean') throw new StoreError(400, 'INVALID_FIELD', 'encryptNewVolumes must be a boolean');
    await ctx.meta.meta.put('encryptNewVolumes', body.encryptNewVolumes);
    sendJson(r, 200, { encryptNewVolumes: volumes.encryptNewVolumes() });
  }),
  route('POST', '/$/encryption/recovery-passphrase/reveal', ({ volumes, r }) => {
    sendJson(r, 200, volumes.keys.reveal(), [['Cache-Control', 'no-store']]);
  }),
  route('POST', '/$/encryption/recovery-passphrase/rotate', async ({ ctx, volumes, r }) => {
    const done = await rotatePassphrase(ctx, volumes);
    sendJson(r, 200, { ...done, next: 'reveal the new passphrase once: POST /$/encryption/recovery-passphrase/reveal' });
  }),
  route('POST', '/$/encryption/recover', async ({ ctx, volumes, r }) => {
    const body = await readJsonObject(r);
    if (!body) return;
    sendJson(r, 200, await recoverKeyFile(ctx, volumes, body.passphrase));
  }),
];
