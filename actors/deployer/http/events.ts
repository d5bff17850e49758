/**
 * `GET /api/deployments/{id}/events`: the deployment's event stream (text/event-stream), planned
 * by protocols/deploy/sse.ts. The stream subscribes to the runner's events (rxjs) BEFORE it reads
 * the deployment and its log, so an event that lands in between arrives live and is dropped only
 * if the snapshot already covers it (its seq): nothing falls between the snapshot and the live
 * stream. The log is read up to the deployment's `lastSeq` (both are written in one transaction,
 * so the two agree). While the deployment is not terminal a heartbeat repeats the last sent id
 * every `heartbeatMs`; the terminal status event ends the stream. A client that goes away frees
 * its subscription and its timer at once. No admin token: the deployment's UUID, which only the
 * deploying job and the admins learn, is what gives access (decided in docs/deployer.md).
 */
import { filter } from 'rxjs';
import { decodeParam, routeFor } from '../../../runtime/http/router.js';
import { refuse } from '../../../protocols/deploy/errors.js';
import { heartbeatFrame, liveStep, openStream } from '../../../protocols/deploy/sse.js';
import type { PublishedEvent } from '../runner.js';
import { eventStreams } from '../metrics.js';
import type { Call } from './call.js';
import { send } from './respond.js';

const route = routeFor<Call, Promise<void> | void>();

/** Streams open now (the `info` request reports it: a test checks that a gone client is freed). */
let openStreams = 0;
export const streamCount = () => openStreams;

export const eventRoutes = [
  route('GET', '/api/deployments/:id/events', (call, { id: raw }) => {
    const { r, svc } = call;
    const id = decodeParam(raw) ?? raw;
    let lastSent = 0;
    let started = false;
    let ended = false;
    const early: PublishedEvent[] = [];
    let heartbeat: NodeJS.Timeout | null = null;
    const sub = svc.runner.events$.pipe(filter((e) => e.deploymentId === id)).subscribe((e) => (started ? live(e) : void early.push(e)));
    const finish = (end: boolean) => {
      if (ended) return;
      ended = true;
      sub.unsubscribe();
      if (heartbeat) clearInterval(heartbeat);
      openStreams--;
      eventStreams.dec();
      if (end && !r.aborted) r.res.cork(() => r.res.end());
    };
    const write = (text: string) => {
      if (!r.aborted && !ended) r.res.cork(() => r.res.write(text));
    };
    const live = (e: PublishedEvent) => {
      if (ended) return;
      const step = liveStep(lastSent, { seq: e.seq, event: e.event });
      lastSent = step.lastSentSeq;
      if (step.frame !== null) write(step.frame);
      if (step.close) finish(true);
    };
    openStreams++;
    eventStreams.inc();
    r.onAbort(() => finish(false));
    if (ended) return; // the client was gone before we started
    const d = svc.store.deployments.get(id);
    if (!d) {
      finish(false);
      return refuse(404, 'DEPLOYMENT_NOT_FOUND', `no deployment ${JSON.stringify(id)}`);
    }
    const log = svc.store.eventsAfter(id, 0).filter((e) => e.seq <= d.lastSeq);
    const plan = openStream(d, log, call.lastEventId);
    if (plan.kind === 'no-content') {
      finish(false);
      return send(r, 204, '');
    }
    r.done = true;
    r.res.cork(() => {
      r.res.writeStatus('200 OK');
      r.res.writeHeader('Content-Type', 'text/event-stream');
      r.res.writeHeader('Cache-Control', 'no-cache');
      r.res.writeHeader('X-Accel-Buffering', 'no');
      r.res.write(plan.frames.join(''));
    });
    lastSent = plan.lastSeq;
    if (plan.then === 'close') return finish(true);
    started = true;
    for (const e of early.splice(0)) live(e);
    if (!ended) heartbeat = setInterval(() => write(heartbeatFrame(lastSent)), svc.args.heartbeatMs);
  }),
];
