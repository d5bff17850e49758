/** The placement rule of new media sessions (pure): pinned, least loaded, unreachable last. */
import test from 'ava';
import { placementOrder, type BackendLoad } from '../../actors/gateway/media/placement.js';

const load = (index: number, sessions: number, reachable = true): BackendLoad => ({ index, sessions, reachable });

test('unpinned: fewest sessions first, ties to the one listed first', (t) => {
  t.deepEqual(placementOrder([load(0, 3), load(1, 1), load(2, 2)]), [1, 2, 0]);
  t.deepEqual(placementOrder([load(0, 2), load(1, 2), load(2, 2)]), [0, 1, 2]);
  t.deepEqual(placementOrder([load(0, 0)]), [0]);
});

test('unreachable backends come after every reachable one, whatever their load', (t) => {
  t.deepEqual(placementOrder([load(0, 0, false), load(1, 9), load(2, 4)]), [2, 1, 0]);
  t.deepEqual(placementOrder([load(0, 5, false), load(1, 1, false)]), [1, 0], 'all down: still tried, least loaded first');
});

test('pinned: that backend only, reachable or not; an index not in the list gives nothing', (t) => {
  t.deepEqual(placementOrder([load(0, 0), load(1, 7)], 1), [1]);
  t.deepEqual(placementOrder([load(0, 0), load(1, 0, false)], 1), [1]);
  t.deepEqual(placementOrder([load(0, 0)], 3), []);
});

test('the input is not reordered in place', (t) => {
  const loads = [load(0, 3), load(1, 1)];
  placementOrder(loads);
  t.deepEqual(loads.map((l) => l.index), [0, 1]);
});

test('no backends: nothing to try', (t) => {
  t.deepEqual(placementOrder([]), []);
});
