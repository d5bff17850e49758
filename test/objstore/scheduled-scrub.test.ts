/**
 * The scheduled full scrub (POST /$/verify-volumes rule 4: every 90 days by default). The clock
 * cannot be moved, so the scheduler's checkpoint is: its `firstSeenAt` is set two days back, and
 * with a one-day interval the restarted store starts a full scrub of the fleet by itself
 * (trigger "scheduled"), once: the next restart finds it done.
 */
import anyTest, { type TestFn } from 'ava';
import { CheckpointStore } from '../../runtime/checkpoint/store.js';
import { SCHEDULER_ID } from '../../actors/scheduler/messages.js';
import type { SchedulerState } from '../../actors/scheduler/state.js';
import type { VerifyRun } from '../../protocols/objstore/maintenance.js';
import { FileScope, keptStateDir, startStore } from './harness.js';
import { api, putObjects, waitFor } from './maint.js';
import { withLoopDevices } from '../helpers/loop.js';

const test = anyTest as TestFn;
const scope = new FileScope();
test.after.always(() => scope.run());

const DAY = 24 * 3600 * 1000;

test.serial('a full scrub starts by itself when the interval has passed, and only once', async (t) => {
  const stateDir = keptStateDir(scope);
  const devices = await withLoopDevices(scope, 6, 512);
  const first = await startStore(scope, { devices, stateDir, scheduler: { scrubIntervalDays: 1 } });
  await putObjects(first.url, 'sch', [1000, 300_000, 5]);
  await new Promise((r) => setTimeout(r, 1500));
  t.deepEqual((await api<{ runs: VerifyRun[] }>(`${first.url}/$/verify-runs`)).body.runs, [], 'a new store is not scrubbed on its first day');
  await first.system.shutdown();

  const cp = CheckpointStore.open(stateDir);
  const rec = cp.load<SchedulerState>(SCHEDULER_ID);
  t.truthy(rec, 'the scheduler checkpointed its state');
  await cp.save(SCHEDULER_ID, rec!.kind, { ...rec!.state, firstSeenAt: Date.now() - 2 * DAY });
  await cp.close();

  const second = await startStore(scope, { devices, stateDir, provision: false, scheduler: { scrubIntervalDays: 1 } });
  const run = await waitFor('the scheduled run to complete', async () => {
    const runs = (await api<{ runs: VerifyRun[] }>(`${second.url}/$/verify-runs`)).body.runs;
    return runs.length === 1 && runs[0]!.status === 'completed' ? runs[0]! : null;
  });
  t.deepEqual(run.trigger, { kind: 'scheduled' });
  t.is(run.mode, 'full');
  t.is(run.volumeIds, null, 'the whole fleet');
  t.is(run.objectsChecked, 3);
  t.deepEqual(Object.values(run.errors), [0, 0, 0, 0, 0, 0, 0]);
  await second.system.shutdown();

  const third = await startStore(scope, { devices, stateDir, provision: false, scheduler: { scrubIntervalDays: 1 } });
  await new Promise((r) => setTimeout(r, 1500));
  t.is((await api<{ runs: VerifyRun[] }>(`${third.url}/$/verify-runs`)).body.runs.length, 1, 'not again until the next interval');
});

test.serial('interval 0 turns the scheduled scrub off', async (t) => {
  const stateDir = keptStateDir(scope);
  const devices = await withLoopDevices(scope, 6, 512);
  const first = await startStore(scope, { devices, stateDir, scheduler: { scrubIntervalDays: 0 } });
  await first.system.shutdown();
  const cp = CheckpointStore.open(stateDir);
  const rec = cp.load<SchedulerState>(SCHEDULER_ID)!;
  await cp.save(SCHEDULER_ID, rec.kind, { ...rec.state, firstSeenAt: Date.now() - 1000 * DAY });
  await cp.close();
  const second = await startStore(scope, { devices, stateDir, provision: false, scheduler: { scrubIntervalDays: 0 } });
  await new Promise((r) => setTimeout(r, 1500));
  t.is((await api<{ runs: VerifyRun[] }>(`${second.url}/$/verify-runs`)).body.runs.length, 0);
});
