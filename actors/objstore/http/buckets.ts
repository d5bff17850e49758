/**
 * Management API, buckets: the list with each bucket's policy, the policy update, and the
 * per-bucket statistics (computed in stats.ts).
 */
import { isValidBucketName } from '../../../protocols/objstore/paths.js';
import { decodeParam } from '../../../runtime/http/router.js';
import { DEFAULT_POLICY, type BucketPolicy } from '../metadata.js';
import { StoreError } from '../store/context.js';
import { readJsonObject, sendJson } from './respond.js';
import { route, type ManageRoute } from './route.js';
import { bucketStats } from './stats.js';

const POLICY_FIELDS = ['publicRead', 'publicWrite', 'deleteProtected'] as const;

export const bucketRoutes: ManageRoute[] = [
  route('GET', '/$/buckets', ({ ctx, r }) => {
    const names = new Set<string>();
    for (const { key: k } of ctx.meta.buckets.getRange()) names.add(k);
    for (const { key: k } of ctx.meta.paths.getRange()) names.add(k.split('/')[1]!);
    const buckets = [...names].sort().map((name) => ({ name, ...ctx.meta.policy(name) }));
    sendJson(r, 200, { buckets });
  }),
  route('GET', '/$/buckets/stats', async ({ ctx, r }) => sendJson(r, 200, await bucketStats(ctx))),
  route('PUT', '/$/buckets/:name/policy', async ({ ctx, r }, params) => {
    const name = decodeParam(params.name);
    if (name === null) throw new StoreError(400, 'INVALID_BUCKET', `bucket name ${JSON.stringify(params.name)} is not valid percent-encoding`);
    if (!isValidBucketName(name)) throw new StoreError(400, 'INVALID_BUCKET', `${JSON.stringify(name)} is not a valid bucket name`);
    const body = await readJsonObject(r);
    if (!body) return;
    const unknown = Object.keys(body).filter((k) => !(POLICY_FIELDS as readonly string[]).includes(k));
    if (unknown.length) throw new StoreError(400, 'UNKNOWN_FIELD', `unknown field(s): ${unknown.join(', ')} (allowed: ${POLICY_FIELDS.join(', ')})`);
    for (const f of POLICY_FIELDS) if (body[f] !== undefined && typeof body[f] !== 'boolean') throw new StoreError(400, 'INVALID_FIELD', `${f} must be a boolean`);
    const policy: BucketPolicy = { ...DEFAULT_POLICY, ...ctx.meta.policy(name) };
    for (const f of POLICY_FIELDS) if (typeof body[f] === 'boolean') policy[f] = body[f] as boolean;
    await ctx.meta.setPolicy(name, policy);
    sendJson(r, 200, { bucket: { name, ...policy } });
  }),
];
