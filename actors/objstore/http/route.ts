/**
 * The management API's route tables (volumes.ts, buckets.ts, status.ts, objects-admin.ts,
 * maintenance.ts; assembled in manage.ts): what every handler gets, the typed builder of a table
 * entry (runtime/http/router.ts), the answer for endpoints of the spec not built yet, and the
 * parsing of the parameters the tables share.
 */
import { routeFor, type Method, type Route } from '../../../runtime/http/router.js';
import type { ActorRef } from '../../../runtime/index.js';
import type { SchedulerProtocol } from '../../scheduler/messages.js';
import { StoreError, type StoreContext } from '../store/context.js';
import type { Volumes } from '../volumes.js';
import type { Reply } from './respond.js';
import type { Notifier } from '../notify.js';
import type { Hotplug } from '../devices.js';
import type { Identify } from '../../volume/identify.js';
import type { Journal } from '../journal/journal.js';
import type { Snapshots } from '../journal/snapshots.js';

/** What some management routes need beyond the data path: notifications, hotplug, identify. */
export interface ManageServices {
  notifier?: Notifier;
  hotplug?: Hotplug;
  identify?: Identify;
  /** the metadata journal (absent when turned off) and the snapshots */
  journal?: Journal | null;
  snapshots?: Snapshots;
}

/** One management request, as its handler sees it (its headers and body are r.req's). */
export interface ManageCall {
  ctx: StoreContext;
  volumes: Volumes;
  scheduler: ActorRef<SchedulerProtocol>;
  /** the store's disk and notification services (absent in the front's store-less tests) */
  services: ManageServices;
  r: Reply;
  method: string;
  /** The path, raw (still percent-encoded), without the query. */
  url: string;
  query: URLSearchParams;
}

/** A handler answers through `r`, or throws a StoreError (manage.ts answers it). */
export type ManageRoute = Route<ManageCall, Promise<void> | void>;

export const route = routeFor<ManageCall, Promise<void> | void>();

/** A volume id from the path: decimal digits only (no sign, no encoding), else 400. */
export function volumeIdOf(raw: string): number {
  if (!/^\d+$/.test(raw)) throw new StoreError(400, 'INVALID_VOLUME_ID', `volume id must be a positive integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}
