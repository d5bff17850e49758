/**
 * The maintenance scheduler actor (`objstore.scheduler`): the one owner of background work on
 * the object store — drains, rebalance, verification runs (scrub), repair, the scheduled scrub —
 * run through the volume actors at low I/O priority. Its state (state.ts) is checkpointed after
 * every handler (persist 'after-handler') and every batch of a job, and restored at boot: every
 * job resumes by itself from its cursor. Relocations a crash interrupted are finished first
 * (sweep.ts sweepMoves). The maintenance freeze (a flag in LMDB, set through the object store's
 * API) holds every job at its next batch, across restarts.
 *
 * Its live value (made in `open`, closed when the instance ends) is the Maint (maint.ts) that the
 * jobs share; in the handlers it is `maint`. Jobs are async loops on this actor's thread; the
 * handlers only change the state and wake them.
 */
import { defineActor, ReplyError, type ActorContext } from '../../runtime/index.js';
import { openEnvironment } from '../../runtime/checkpoint/store.js';
import { nextScrubAt, RESUME_ORDER, type MaintenanceKind } from '../../protocols/objstore/maintenance.js';
import { BufferPool, Metadata, type SliceContext } from '../objstore/store/index.js';
import { drainView, newDrain, runDrain } from './drain.js';
import { Fleet } from './fleet.js';
import { Maint } from './maint.js';
import type { SchedulerArgs, SchedulerProtocol } from './messages.js';
import { newRebalance, rebalanceView, runRebalance } from './rebalance.js';
import { sweepMoves } from './sweep.js';
import { acceptLoss, repairRound } from './repair.js';
import { listRuns, runVerify, startVerify, stopVerify, verifyView } from './scrub.js';
import { initialState, type SchedulerState } from './state.js';
import { reportOn } from './metrics.js';
import { OBJSTORE_ID, type ObjstoreProtocol } from '../objstore/messages.js';
import type { Notification } from '../../protocols/objstore/notify.js';
import { unhealthyNotice } from '../objstore/notify.js';
import { remoteJournal } from '../objstore/journal/remote.js';

type Ctx = ActorContext<SchedulerState, SchedulerArgs>;

/** Refuse with one of the codes SchedulerProtocol declares; the front decides what the client sees. */
function refuse(code: NonNullable<SchedulerProtocol['codes']>, message: string): never {
  throw new ReplyError(code, message);
}

/** Run a job loop in the background; a failure is logged and the loop started again later. */
function spawnJob(ctx: Ctx, name: string, fn: () => Promise<void>): void {
  const go = () => {
    fn().catch((err: unknown) => {
      if (ctx.signal.aborted) return;
      ctx.log.error({ job: name, err: (err as Error).stack ?? String(err) }, 'maintenance job failed; it resumes from its checkpoint in 5 s');
      ctx.setTimeout(go, 5000);
    });
  };
  go();
}

function startDrainJob(ctx: Ctx, maint: Maint, volumeId: number): void {
  spawnJob(ctx, `drain ${volumeId}`, async () => {
    const d = maint.state.drains[String(volumeId)];
    if (d?.state === 'running') await runDrain(maint, d);
  });
}

function startRebalanceJob(ctx: Ctx, maint: Maint): void {
  spawnJob(ctx, 'rebalance', async () => {
    const r = maint.state.rebalance;
    if (r?.running) await runRebalance(maint, r);
  });
}

function startVerifyJob(ctx: Ctx, maint: Maint): void {
  spawnJob(ctx, 'verify', async () => {
    const v = maint.state.verify;
    if (v) await runVerify(maint, v);
  });
}

async function checkScheduledScrub(ctx: Ctx, maint: Maint): Promise<void> {
  const due = nextScrubAt(maint.state.lastScheduledScrubAt, maint.state.firstSeenAt, ctx.args.scrubIntervalDays);
  if (due === null || Date.now() < due || maint.state.verify || maint.frozen) return;
  const r = await startVerify(maint, { volumeIds: null, mode: 'full', trigger: { kind: 'scheduled' } });
  maint.state.lastScheduledScrubAt = Date.now();
  await maint.save();
  if (r.started) {
    ctx.log.info({ every: `${ctx.args.scrubIntervalDays} days` }, 'scheduled full scrub started');
    startVerifyJob(ctx, maint);
  }
}

/**
 * The jobs the restored state says were running, started again in the resume order of the spec
 * (RESUME_ORDER: drains, then scrub and repair, then rebalance). Repair has no job of its own to
 * resume: its worker looks for pending faults on an interval.
 */
function resumeJobs(ctx: Ctx, maint: Maint): void {
  const resume: Record<MaintenanceKind, () => void> = {
    drain: () => {
      for (const d of Object.values(maint.state.drains)) if (d.state === 'running') startDrainJob(ctx, maint, d.volumeId);
    },
    scrub: () => {
      if (maint.state.verify) startVerifyJob(ctx, maint);
    },
    repair: () => undefined,
    rebalance: () => {
      if (maint.state.rebalance?.running) startRebalanceJob(ctx, maint);
    },
  };
  for (const kind of RESUME_ORDER) resume[kind]();
}

/**
 * Open the scheduler's live part: the metadata, the fleet, the data path (low priority), the
 * Maint that every job works with; finish the relocations a crash interrupted, resume the jobs,
 * and start the periodic work (sweeping moves, repair rounds, the scheduled scrub).
 */
async function start(ctx: Ctx): Promise<Maint> {
  const state = ctx.state;
  // Conditions found here are told by the store's notifier (its thread holds the dedup).
  const objstore = ctx.ref<ObjstoreProtocol>(OBJSTORE_ID);
  const notify = (notification: Notification) => objstore.send({ type: 'notify', notification });
  const meta = new Metadata(openEnvironment(ctx.args.stateDir), { healthFaultThreshold: ctx.args.healthFaultThreshold, log: ctx.log, onUnhealthy: (v) => notify(unhealthyNotice(v)) });
  // Its record changes (slice moves, the draining flag) go to the store's journal first.
  meta.journal = remoteJournal(objstore);
  const fleet = new Fleet(meta, (id) => ctx.ref(id));
  // The slice side of the data path (the scheduler writes no objects), through the fleet's
  // low-priority volume refs.
  const store: SliceContext = {
    meta,
    log: ctx.log,
    settings: { ioTimeoutMs: ctx.args.ioTimeoutMs },
    volume: (id) => fleet.ref(id),
    runTask: (name, arg, transfer) => ctx.runTask(name, arg, transfer),
    buffers: new BufferPool(),
  };
  const maint = new Maint({ store, fleet, log: ctx.log, args: ctx.args, state, signal: ctx.signal, save: () => ctx.checkpoint(state), notify });
  reportOn(maint);
  try {
    await fleet.refresh();
    // Finish what a crash interrupted: unfinished copies are undone, flipped moves completed.
    const onDeleteFailed = (mv: { by: string; at: number }) => {
      const r = state.rebalance;
      // Counted for the rebalance that made the move (not a later one), and saved at once.
      if (mv.by === 'rebalance' && r?.startedAt && mv.at >= r.startedAt) {
        r.counters.sourceDeleteFailed++;
        void maint.save().catch(() => undefined);
      }
    };
    const swept = await sweepMoves(store, 0, { boot: true, onDeleteFailed });
    if (swept.deleted || swept.undone || swept.failed) ctx.log.info(swept, 'relocations interrupted by the last stop finished');
    if (maint.frozen) ctx.log.warn('maintenance is frozen: drains, scrub, repair and rebalance wait for PUT /$/maintenance-freeze {"frozen": false}');
    resumeJobs(ctx, maint);
    ctx.setInterval(() => {
      if (maint.frozen) return; // the freeze holds every disk write of maintenance, deletes included
      void sweepMoves(store, ctx.args.moveGraceMs, { onDeleteFailed }).catch((err: unknown) => ctx.log.warn({ err: (err as Error).message }, 'sweeping relocations failed'));
    }, Math.max(100, Math.min(5000, ctx.args.moveGraceMs)));
    let repairing = false;
    ctx.setInterval(() => {
      if (repairing || !maint.may('repair')) return;
      repairing = true;
      repairRound(maint)
        .catch((err: unknown) => ctx.log.error({ err: (err as Error).stack }, 'repair round failed'))
        .finally(() => (repairing = false));
    }, ctx.args.repairIntervalMs);
    ctx.setInterval(() => void checkScheduledScrub(ctx, maint).catch(() => undefined), 3600_000);
    ctx.setTimeout(() => void checkScheduledScrub(ctx, maint).catch(() => undefined), 1000);
    await ctx.checkpoint(state);
  } catch (err) {
    closeMaint(maint);
    throw err;
  }
  return maint;
}

/** The instance ends (ctx.signal is aborted, its timers cleared): the job loops stop, metrics go. */
function closeMaint(maint: Maint): void {
  reportOn(null);
  maint.close();
}

export default defineActor<SchedulerProtocol, SchedulerState, SchedulerArgs, Maint>({
  kind: 'scheduler',
  concurrency: 8,
  // Every handler's change is on disk before its reply; the job loops save at their checkpoints.
  persist: 'after-handler',
  init: (_ctx, restored) => restored ?? initialState(Date.now()),
  open: (ctx) => start(ctx),
  close: (maint) => closeMaint(maint),
  handlers: {
    async drainStart(msg, ctx, maint) {
      const rec = maint.store.meta.volumes.get(msg.volumeId);
      if (!rec) refuse('NO_SUCH_VOLUME', `no volume ${msg.volumeId}`);
      if (rec.isDeleted) refuse('VOLUME_DELETED', `volume ${msg.volumeId} is deleted`);
      const cur = maint.state.drains[String(msg.volumeId)];
      if (cur?.state === 'running') return drainView(maint, cur);
      await maint.store.meta.putVolume({ ...rec, isReadOnly: true, isDraining: true });
      const d = newDrain(msg.volumeId, Date.now());
      maint.state.drains[String(msg.volumeId)] = d;
      ctx.log.info({ volumeId: msg.volumeId }, 'drain started');
      startDrainJob(ctx, maint, msg.volumeId);
      maint.changed();
      return drainView(maint, d);
    },
    async drainCancel(msg, ctx, maint) {
      const rec = maint.store.meta.volumes.get(msg.volumeId);
      if (!rec) refuse('NO_SUCH_VOLUME', `no volume ${msg.volumeId}`);
      const d = maint.state.drains[String(msg.volumeId)];
      if (!d || d.state !== 'running') {
        if (rec.isDraining && !rec.isDeleted) await maint.store.meta.putVolume({ ...rec, isDraining: false });
        if (!d) refuse('NOT_DRAINING', `volume ${msg.volumeId} is not draining`);
        return drainView(maint, d);
      }
      d.state = 'cancelled';
      d.finishedAt = Date.now();
      await maint.store.meta.putVolume({ ...rec, isDraining: false });
      ctx.log.info({ volumeId: msg.volumeId, moved: d.moved }, 'drain cancelled (the volume stays read-only)');
      maint.changed();
      return drainView(maint, d);
    },
    drainGet(msg, _ctx, maint) {
      const d = maint.state.drains[String(msg.volumeId)];
      if (!d) refuse('NO_DRAIN', `volume ${msg.volumeId} has not been drained`);
      return drainView(maint, d);
    },
    async rebalanceStart(msg, ctx, maint) {
      if (maint.state.rebalance?.running) refuse('REBALANCE_RUNNING', 'a rebalance is running already');
      if (maint.frozen) refuse('FROZEN', 'a maintenance freeze is active');
      await maint.fleet.refresh();
      maint.state.rebalance = newRebalance(msg, Date.now());
      ctx.log.info({ deadband: msg.deadband, maxMoves: msg.maxMoves, concurrency: msg.concurrency }, 'rebalance started');
      startRebalanceJob(ctx, maint);
      maint.changed();
      return rebalanceView(maint, maint.state.rebalance);
    },
    async rebalanceGet(_msg, _ctx, maint) {
      await maint.fleet.refresh();
      return rebalanceView(maint, maint.state.rebalance);
    },
    async rebalanceTune(msg, ctx, maint) {
      const r = maint.state.rebalance;
      if (!r?.running) refuse('NO_REBALANCE', 'no rebalance is running');
      r.concurrency = msg.concurrency;
      ctx.log.info({ concurrency: msg.concurrency }, 'rebalance retuned (from the next batch)');
      return rebalanceView(maint, r);
    },
    async rebalanceCancel(_msg, ctx, maint) {
      const r = maint.state.rebalance;
      if (r?.running) {
        r.running = false;
        r.finishedAt = Date.now();
        r.lastOutcome = 'cancelled';
        r.currentSourceVolumeId = null;
        ctx.log.info({ moves: r.counters.moves }, 'rebalance cancelled');
        maint.changed();
      }
      return rebalanceView(maint, r);
    },
    async verifyStart(msg, ctx, maint) {
      for (const v of msg.volumeIds ?? []) {
        const rec = maint.store.meta.volumes.get(v);
        if (!rec) refuse('NO_SUCH_VOLUME', `no volume ${v}`);
        if (rec.isDeleted) refuse('VOLUME_DELETED', `volume ${v} is deleted (a tombstone): there is nothing to verify on it`);
      }
      const r = await startVerify(maint, msg);
      if (r.started) startVerifyJob(ctx, maint);
      const { started: _s, ...reply } = r;
      return reply;
    },
    verifyGet: (_msg, _ctx, maint) => verifyView(maint),
    async verifyStop(_msg, _ctx, maint) {
      await stopVerify(maint, 'stopped by DELETE /$/verify-volumes');
      return verifyView(maint);
    },
    verifyRuns: (msg, _ctx, maint) => listRuns(maint, msg.limit),
    freezeChanged(_msg, ctx, maint) {
      ctx.log.info({ frozen: maint.frozen }, maint.frozen ? 'maintenance frozen: jobs stop at their next batch' : 'maintenance unfrozen: drains resume, then scrub and repair, then rebalance');
      maint.changed();
      return { frozen: maint.frozen };
    },
    async acceptLoss(msg, _ctx, maint) {
      if (!maint.store.meta.objects.get(msg.objectId)) refuse('NOT_FOUND', `no object ${msg.objectId}`);
      const n = await acceptLoss(maint, msg.objectId, msg.sliceIndex, msg.comment);
      if (n === 0) refuse('NO_FAULT', `object ${msg.objectId} has no fault${msg.sliceIndex === null ? '' : ` on slice ${msg.sliceIndex}`}`);
      return { objectId: msg.objectId, accepted: n };
    },
    async debug(_msg, _ctx, maint) {
      await maint.fleet.refresh();
      let copying = 0;
      let flipped = 0;
      for (const { value } of maint.store.meta.moves.getRange()) {
        if (value.phase === 'copying') copying++;
        else flipped++;
      }
      return {
        frozen: maint.frozen,
        drains: Object.values(maint.state.drains).map((d) => drainView(maint, d)),
        rebalance: rebalanceView(maint, maint.state.rebalance),
        verify: verifyView(maint),
        repair: { repaired: maint.state.repairs.repaired, blocked: maint.state.repairs.blocked, lastRunAt: maint.state.repairs.lastRunAt ? new Date(maint.state.repairs.lastRunAt).toISOString() : null },
        moves: { copying, flipped },
        busyObjects: maint.busyObjects,
      };
    },
  },
});
