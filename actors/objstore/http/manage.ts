/**
 * The management API under /$/, assembled from its route tables, one file per section of the
 * spec: volumes.ts, buckets.ts, status.ts (status, storage-stats, faults, block devices),
 * objects-admin.ts (fileinfo, verify-file), encryption.ts (keys, passphrase, recovery),
 * maintenance.ts (drain, rebalance, verify, accept-loss, the freeze, debug), and the web UI's
 * bundle (ui.ts). An unknown path 404, a known path with another method 405 with `Allow`.
 */
import { Router, type Match } from '../../../runtime/http/router.js';
import type { ActorRef } from '../../../runtime/index.js';
import type { SchedulerProtocol } from '../../scheduler/messages.js';
import type { StoreContext } from '../store/context.js';
import type { Volumes } from '../volumes.js';
import { bucketRoutes } from './buckets.js';
import { maintenanceRoutes } from './maintenance.js';
import { objectAdminRoutes } from './objects-admin.js';
import { managementRefusal } from '../../../protocols/objstore/origin.js';
import { header, sendError, sendFailure, type Reply } from './respond.js';
import { type ManageCall, type ManageServices } from './route.js';
import { statusRoutes } from './status.js';
import { uiRoutes } from './ui.js';
import { volumeRoutes } from './volumes.js';
import { encryptionRoutes } from './encryption.js';
import { notifyRoutes } from './notify.js';
import { snapshotRoutes } from './snapshots.js';

const router = new Router<ManageCall, Promise<void> | void>([
  ...volumeRoutes,
  ...encryptionRoutes,
  ...maintenanceRoutes,
  ...bucketRoutes,
  ...statusRoutes,
  ...objectAdminRoutes,
  ...notifyRoutes,
  ...snapshotRoutes,
  ...uiRoutes,
]);

/** How a 405 names the methods of a path, where the bare list says too little. */
const METHOD_NOTES: Readonly<Record<string, string>> = {
  '/$/volumes/:id/drain': 'POST starts, GET shows, DELETE cancels',
};

function methodNotAllowed(m: Extract<Match<ManageCall>, { kind: 'method-not-allowed' }>, method: string): [string, Array<[string, string]>] {
  const shown = m.path.replace(/:(\w+)/g, '{$1}');
  const allow = m.allow.join(', ');
  return [`${method} is not allowed on ${shown} (${METHOD_NOTES[m.path] ?? allow})`, [['Allow', allow]]];
}

export function handleManage(ctx: StoreContext, volumes: Volumes, scheduler: ActorRef<SchedulerProtocol>, r: Reply, url: string, query: URLSearchParams, services: ManageServices = {}): void {
  const method = (r.req.method ?? '').toUpperCase();
  const length = header(r.req, 'content-length');
  const refused = managementRefusal(
    {
      method,
      origin: header(r.req, 'origin') || undefined,
      host: header(r.req, 'host') || undefined,
      contentType: header(r.req, 'content-type') || undefined,
      hasBody: (length !== '' && length !== '0') || header(r.req, 'transfer-encoding') !== '',
    },
    ctx.settings?.allowedOrigins ?? [],
  );
  // Answered at once; a body that may follow is not read (respond.ts closes the connection).
  if (refused) return sendError(r, refused.status, refused.code, refused.message);
  const m = router.match(method, url);
  if (m.kind === 'not-found') return sendError(r, 404, 'NO_SUCH_ENDPOINT', `no management endpoint ${method} ${url}`);
  if (m.kind === 'method-not-allowed') {
    const [message, headers] = methodNotAllowed(m, method);
    return sendError(r, 405, 'METHOD_NOT_ALLOWED', message, headers);
  }
  const call: ManageCall = { ctx, volumes, scheduler, services, r, method, url, query };
  void (async () => {
    try {
      await m.route.handle(call, m.params);
    } catch (err) {
      sendFailure(r, err, ctx.log, 'management request');
    }
  })();
}
