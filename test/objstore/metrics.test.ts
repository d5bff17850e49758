/**
 * The object store's Prometheus metrics, as /metrics serves them (gathered from every thread):
 * HTTP answers by status, per-volume capacity, flags and faulty-slice counts, the freeze.
 */
import anyTest, { type TestFn } from 'ava';
import { FileScope, startStore, type Store } from './harness.js';
import { api, putObjects } from './maint.js';

const test = anyTest as TestFn<{ store: Store }>;
const scope = new FileScope();

test.before(async (t) => {
  t.context = { store: await startStore(scope, { volumes: 6 }) };
});
test.after.always(() => scope.run());

function value(text: string, series: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line ? Number(line.slice(series.length + 1)) : null;
}

test.serial('answers are counted by status; volumes report capacity and flags', async (t) => {
  const { store } = t.context;
  const before = value(await store.system.metrics(), 'objstore_http_responses_total{status="201"}') ?? 0;
  await putObjects(store.url, 'met', [1000, 2000]);
  t.is((await api(`${store.url}/met/missing`)).status, 404);
  const text = await store.system.metrics();
  t.is(value(text, 'objstore_http_responses_total{status="201"}'), before + 2);
  t.true((value(text, 'objstore_http_responses_total{status="404"}') ?? 0) >= 1);
  const vols = (await api<{ volumes: Array<{ id: number; bytesTotal: number }> }>(`${store.url}/$/volumes`)).body.volumes;
  t.is(vols.length, 6);
  for (const v of vols) {
    t.is(value(text, `objstore_volume_bytes{volume="${v.id}",kind="total"}`), v.bytesTotal);
    t.is(value(text, `objstore_volume_state{volume="${v.id}",flag="healthy"}`), 1);
    t.is(value(text, `objstore_volume_state{volume="${v.id}",flag="read_only"}`), 0);
    t.is(value(text, `objstore_volume_faulty_slices{volume="${v.id}"}`), 0);
  }
});

test.serial('the freeze gauge follows PUT /$/maintenance-freeze; a read-only flag shows', async (t) => {
  const { store } = t.context;
  t.is(value(await store.system.metrics(), 'objstore_maintenance_frozen'), 0);
  t.is((await api(`${store.url}/$/maintenance-freeze`, 'PUT', { frozen: true })).status, 200);
  t.is(value(await store.system.metrics(), 'objstore_maintenance_frozen'), 1);
  t.is((await api(`${store.url}/$/maintenance-freeze`, 'PUT', { frozen: false })).status, 200);
  t.is(value(await store.system.metrics(), 'objstore_maintenance_frozen'), 0);
  t.is((await api(`${store.url}/$/volumes/3`, 'PUT', { isReadOnly: true })).status, 200);
  t.is(value(await store.system.metrics(), 'objstore_volume_state{volume="3",flag="read_only"}'), 1);
});
