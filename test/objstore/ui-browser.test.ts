/**
 * The web UI in headless Chromium (playwright-core, Debian's /usr/bin/chromium) against a real
 * store on loop devices: three volumes with objects in two buckets and a fourth, spare disk.
 * Provisioning the spare from the UI (the typed confirmation, the wipe timestamp made at that
 * moment), a drain started from the UI that shows its progress and finishes, the freeze toggled
 * both ways (and a change made through the API seen live), a bucket's policy set, a loss
 * accepted on the faults page, identify's 501 shown as "not available", and every page loading
 * without a console error, each screenshotted into test-output/ui/ (and into docs/images/ as
 * ui-<page>.png when UI_DOCS_SCREENSHOTS=1). One browser for the file, a page per test.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { withLoopDevices } from '../helpers/loop.js';
import { FileScope, startStore, type Store } from './harness.js';
import { api, assertAllExact, flipByte, putObjects, waitFor } from './maint.js';

interface Ctx {
  store: Store;
  spare: string;
  browser: Browser;
  bodies: Map<string, Buffer>;
}
const test = anyTest as TestFn<Ctx>;
const scope = new FileScope();

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const OUT = join(root, 'test-output', 'ui');
const DOCS = process.env.UI_DOCS_SCREENSHOTS === '1' ? join(root, 'docs', 'images') : null;

test.before(async (t) => {
  const devices = await withLoopDevices(scope, 4, 512);
  const store = await startStore(scope, { devices: devices.slice(0, 3), scheduler: { drainConcurrency: 2 } });
  const bodies = new Map([
    ...(await putObjects(store.url, 'photos', [1, 4096, 100_000, 1024 * 1024 + 3, 3 * 1024 * 1024 + 77, 250_000])),
    ...(await putObjects(store.url, 'docs', [0, 5000, 777_777])),
  ]);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  scope.teardown(() => browser.close());
  mkdirSync(OUT, { recursive: true });
  t.context = { store, spare: devices[3]!, browser, bodies };
});
test.after.always(() => scope.run());

interface Opened {
  page: Page;
  /** console errors and uncaught exceptions of the page so far */
  errors: string[];
}

/** A new page at `#/<hash>`, collecting its console errors; confirm() dialogs are accepted. */
async function open(t: ExecutionContext<Ctx>, hash: string): Promise<Opened> {
  const page = await t.context.browser.newPage({ viewport: { width: 1280, height: 800 } });
  t.teardown(() => page.close());
  const errors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(`console: ${m.text()} (${m.location().url})`));
  page.on('pageerror', (e) => errors.push(`exception: ${e.message}`));
  page.on('dialog', (d) => void d.accept());
  await page.goto(`${t.context.store.url}/$/ui/#/${hash}`);
  return { page, errors };
}

async function screenshot(page: Page, name: string): Promise<void> {
  const file = join(OUT, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  if (DOCS) copyFileSync(file, join(DOCS, `ui-${name}.png`));
}

interface VolumeView {
  id: number;
  device: string;
  label: string;
  isDraining: boolean;
  isReadOnly: boolean;
}

test.serial('provisioning from the UI: the device is named to confirm, then it is a new volume', async (t) => {
  const { store, spare } = t.context;
  const { page, errors } = await open(t, 'provision');
  const row = page.locator(`tr[data-device="${spare}"]`);
  await row.getByText('free').waitFor();
  t.is(await page.locator('tr[data-device]').filter({ hasText: 'volume ' }).count(), 3, 'the three volumes are shown as in use');
  await row.getByRole('button', { name: 'Provision…' }).click();
  const name = spare.replace('/dev/', '');
  const submit = page.getByRole('button', { name: `Wipe and provision ${name}` });
  await page.locator('input[name=label]').fill('bay 4');
  await page.locator('input[name=confirm]').fill('loop-wrong');
  t.true(await submit.isDisabled(), 'a wrong name does not arm the button');
  await page.locator('input[name=confirm]').fill(name);
  t.false(await submit.isDisabled());
  // Under the store's start lock, as the harness provisions: another file's store booting meanwhile
  // mounts every block device briefly to read its identity.
  const { startLock } = await import('./harness.js');
  const release = await startLock();
  try {
    await submit.click();
    await page.getByText(`${spare} is now volume`).waitFor({ timeout: 60_000 });
  } finally {
    release();
  }
  const vols = await api<{ volumes: VolumeView[] }>(`${store.url}/$/volumes`);
  const made = vols.body.volumes.find((v) => v.device === spare);
  t.truthy(made, 'the API lists the new volume');
  t.is(made?.label, 'bay 4');
  t.is(vols.body.volumes.length, 4);
  t.deepEqual(errors, []);
});

test.serial('a drain started from the UI shows its progress and finishes; every object still reads', async (t) => {
  const { store, bodies } = t.context;
  const { page, errors } = await open(t, 'volumes/1');
  await page.getByRole('heading', { name: /^Volume 1/ }).waitFor();
  await page.getByRole('button', { name: 'Drain', exact: true }).click();
  const progress = page.locator('[data-drain="1"]').first();
  await progress.waitFor({ timeout: 10_000 });
  const seen: string[] = [];
  await waitFor('the drain of volume 1 to complete in the UI', async () => {
    // State and text read together: the page re-renders between two separate reads.
    const [state, text] = await progress.evaluate((el) => [el.getAttribute('data-state'), el.textContent ?? '']);
    if (seen.at(-1) !== text) seen.push(text);
    return state === 'completed';
  }, 120_000, 250);
  const last = seen.at(-1)!;
  t.log(seen);
  const m = /(\d+) of (\d+) slices moved .*?, 0 left/.exec(last);
  t.truthy(m, `the finished drain says how much moved: ${last}`);
  t.true(Number(m?.[1]) > 0 && m?.[1] === m?.[2], last);
  t.is(await progress.locator('[role=progressbar]').getAttribute('aria-valuenow'), '100');
  const d = await api<{ drain: { state: string; remaining: number; moved: number } }>(`${store.url}/$/volumes/1/drain`);
  t.is(d.body.drain.state, 'completed');
  t.is(d.body.drain.remaining, 0);
  t.is(String(d.body.drain.moved), m?.[1] ?? '');
  await page.getByRole('button', { name: 'Cancel drain' }).waitFor();
  await screenshot(page, 'volume');
  await assertAllExact(t, store.url, bodies);
  t.deepEqual(errors, []);
});

test.serial('the freeze toggled from the UI is seen through the API, and one set through the API is seen in the UI', async (t) => {
  const { store } = t.context;
  const { page, errors } = await open(t, 'maintenance');
  const sw = page.getByRole('switch');
  await sw.waitFor();
  t.false(await sw.isChecked());
  await sw.click();
  await waitFor('the API to say frozen', async () => (await api<{ frozen: boolean }>(`${store.url}/$/maintenance-freeze`)).body.frozen === true, 10_000);
  await page.getByText('maintenance frozen').waitFor({ timeout: 10_000 });
  await sw.click();
  await waitFor('the API to say not frozen', async () => (await api<{ frozen: boolean }>(`${store.url}/$/maintenance-freeze`)).body.frozen === false, 10_000);
  // Live: a change made elsewhere shows within a poll.
  await api(`${store.url}/$/maintenance-freeze`, 'PUT', { frozen: true });
  await waitFor('the UI to show frozen', async () => sw.isChecked(), 10_000);
  await api(`${store.url}/$/maintenance-freeze`, 'PUT', { frozen: false });
  await waitFor('the UI to show not frozen', async () => !(await sw.isChecked()), 10_000);
  t.deepEqual(errors, []);
});

test.serial('a verification started from the UI runs and lands in the history', async (t) => {
  const { page, errors } = await open(t, 'maintenance');
  await page.locator('select[name=mode]').selectOption('light');
  await page.getByRole('button', { name: 'Verify the fleet' }).click();
  await page.getByText(/Started\./).waitFor({ timeout: 10_000 });
  const row = page.locator('tr[data-run]').first();
  await row.getByText('completed').waitFor({ timeout: 60_000 });
  t.regex((await row.textContent()) ?? '', /manual.*light.*all.*completed/);
  t.deepEqual(errors, []);
});

test.serial('a bucket policy set from the UI is the bucket\'s policy', async (t) => {
  const { store } = t.context;
  const { page, errors } = await open(t, 'buckets');
  const box = page.getByRole('checkbox', { name: 'docs deleteProtected' });
  await box.waitFor();
  t.false(await box.isChecked());
  await box.check();
  await waitFor('docs to be delete-protected', async () => {
    const b = await api<{ buckets: Array<{ name: string; deleteProtected: boolean }> }>(`${store.url}/$/buckets`);
    return b.body.buckets.find((x) => x.name === 'docs')?.deleteProtected === true;
  }, 10_000);
  await page.locator('tr[data-bucket=photos]').getByText('6').waitFor({ timeout: 20_000 });
  const del = await fetch(`${store.url}/docs/o1`, { method: 'DELETE' });
  t.is(del.status, 403, 'the store enforces what the UI set');
  t.deepEqual(errors, []);
});

test.serial('a fault is shown with its repair state, and a loss accepted from the UI blocks its repair', async (t) => {
  const { store } = t.context;
  const info = await api<{ object: { id: string }; slices: Array<{ index: number; path: string }> }>(`${store.url}/$/fileinfo/docs/o2`);
  const slice = info.body.slices[0]!;
  flipByte(slice.path, false);
  await api(`${store.url}/$/verify-file/${info.body.object.id}`, 'POST', { mode: 'full' });
  const { page, errors } = await open(t, 'faults');
  const row = page.locator(`tr[data-fault="${info.body.object.id}.${slice.index}"]`);
  await row.getByText('CHECKSUM').waitFor({ timeout: 10_000 });
  await page.locator('input[name=comment]').fill('restored from backup');
  await row.getByRole('button', { name: 'Accept loss' }).click();
  await row.getByText('the loss was accepted').waitFor({ timeout: 10_000 });
  const f = await api<{ faults: Array<{ objectId: string; repairStatus: string; repairBlockedReason: string; message: string }> }>(`${store.url}/$/faults`);
  const fault = f.body.faults.find((x) => x.objectId === info.body.object.id);
  t.is(fault?.repairStatus, 'blocked');
  t.is(fault?.repairBlockedReason, 'unrecoverable');
  t.regex(fault?.message ?? '', /restored from backup/);
  t.deepEqual(errors, []);
});

test.serial('identify from a volume\'s page: the store starts it (200, identifying), the page re-sends it while on, and Stop ends it', async (t) => {
  const { store } = t.context;
  const { page, errors } = await open(t, 'volumes/2');
  const started = page.waitForResponse((r) => r.url().endsWith('/$/volumes/2/identify') && r.request().method() === 'POST');
  await page.getByRole('button', { name: 'Identify' }).click();
  const first = await started;
  t.is(first.status(), 200);
  t.like(await first.json(), { volumeId: 2, identifying: true });
  await page.getByRole('button', { name: 'Stop identify' }).waitFor({ timeout: 10_000 });
  // While on, the page extends the deadline (about once a second).
  const again = await page.waitForResponse((r) => r.url().endsWith('/$/volumes/2/identify') && r.request().method() === 'POST', { timeout: 5_000 });
  t.is(again.status(), 200);
  const stopped = page.waitForResponse((r) => r.url().endsWith('/$/volumes/2/identify') && r.request().method() === 'DELETE');
  await page.getByRole('button', { name: 'Stop identify' }).click();
  t.like(await (await stopped).json(), { volumeId: 2, identifying: false, wasOn: true });
  await page.getByRole('button', { name: 'Identify' }).waitFor({ timeout: 10_000 });
  const after = await api<{ wasOn: boolean }>(`${store.url}/$/volumes/2/identify`, 'DELETE');
  t.false(after.body.wasOn, 'nothing runs after Stop');
  t.is(await page.getByRole('alert').count(), 0, 'no error notice');
  t.deepEqual(errors, []);
});

test.serial('flags, label and comment saved from a volume\'s page are the volume\'s', async (t) => {
  const { store } = t.context;
  const { page, errors } = await open(t, 'volumes/2');
  const save = page.getByRole('button', { name: 'Save' });
  await save.waitFor();
  t.true(await save.isDisabled(), 'nothing to save before a change');
  await page.locator('input[name=label]').fill('bay 2');
  await page.locator('input[name=comment]').fill('replaced 2026-11');
  await page.locator('input[name=isReadOnly]').check();
  await save.click();
  await page.getByText('saved', { exact: true }).waitFor({ timeout: 10_000 });
  const v = await api<{ volume: VolumeView & { comment: string } }>(`${store.url}/$/volumes/2`);
  t.is(v.body.volume.label, 'bay 2');
  t.is(v.body.volume.comment, 'replaced 2026-11');
  t.true(v.body.volume.isReadOnly);
  await page.locator('input[name=isReadOnly]').uncheck();
  await save.click();
  await waitFor('volume 2 writable again', async () => !(await api<{ volume: VolumeView }>(`${store.url}/$/volumes/2`)).body.volume.isReadOnly, 10_000);
  // A change made elsewhere shows in the untouched form, and Save has nothing to send.
  await api(`${store.url}/$/volumes/2`, 'PUT', { comment: 'set elsewhere' });
  await waitFor('the form to follow the volume', async () => (await page.locator('input[name=comment]').inputValue()) === 'set elsewhere', 10_000);
  t.true(await save.isDisabled());
  t.deepEqual(errors, []);
});

test.serial('deleting a volume that holds slices is refused with the store\'s message, shown on the page', async (t) => {
  const { store } = t.context;
  const { page, errors } = await open(t, 'volumes/3');
  await page.getByRole('button', { name: 'Delete' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor({ timeout: 10_000 });
  t.regex((await alert.textContent()) ?? '', /volume 3 still holds \d+ live object slice\(s\); drain it first: POST \/\$\/volumes\/3\/drain/);
  t.false((await api<{ volume: { isDeleted: boolean } }>(`${store.url}/$/volumes/3`)).body.volume.isDeleted);
  // The browser logs the refused request itself; the page raised nothing.
  t.true(errors.every((e) => /status of 409/.test(e)), errors.join('\n'));
});

test.serial('a rebalance started from the UI runs (or finishes) and the page says so', async (t) => {
  const { store } = t.context;
  const { page, errors } = await open(t, 'maintenance');
  await page.locator('input[name=deadband]').fill('0');
  await page.locator('input[name=concurrency]').fill('1');
  await page.getByRole('button', { name: 'Start rebalance' }).click();
  await waitFor('the rebalance to have started', async () => (await api<{ startedAt: string | null }>(`${store.url}/$/rebalance`)).body.startedAt !== null, 10_000);
  await waitFor('the rebalance to end', async () => !(await api<{ running: boolean }>(`${store.url}/$/rebalance`)).body.running, 60_000);
  await page.getByText(/Idle; the last one started/).waitFor({ timeout: 10_000 });
  t.deepEqual(errors, []);
});

for (const [name, hash, ready] of [
  ['overview', 'overview', '.card'],
  ['volumes', 'volumes', 'tr[data-volume="4"]'],
  ['provisioning', 'provision', 'tr[data-device]'],
  ['faults', 'faults', 'tr[data-fault]'],
  ['maintenance', 'maintenance', 'tr[data-run]'],
  ['buckets', 'buckets', 'tr[data-bucket=photos]'],
] as const) {
  test.serial(`the ${name} page loads without console errors (screenshot ${name}.png)`, async (t) => {
    const { page, errors } = await open(t, hash);
    await page.locator(ready).first().waitFor({ timeout: 10_000 });
    t.is(await page.locator('main').getAttribute('data-page'), hash);
    t.is(await page.getByRole('alert').count(), 0, 'no error notice on the page');
    // One more poll, so a failure that shows only on refresh is seen too.
    await page.waitForTimeout(1800);
    await screenshot(page, name);
    t.deepEqual(errors, []);
  });
}
