/**
 * Notifications: the pure rules (severities, the test body, dedup with escalation, the webhook
 * body), the notifier against a real loopback webhook (delivered, deduplicated, escalated, a 500
 * and a hang reported as failed without blocking longer than the timeout, the URL never in the
 * log), and `POST /$/notify/test` on a real store (what was delivered; every bad input a 400
 * naming it).
 */
import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { Writable } from 'node:stream';
import pino from 'pino';
import { parseTestNotification, shouldSend, webhookBody } from '../../protocols/objstore/notify.js';
import { Notifier } from '../../actors/objstore/notify.js';
import { startStore } from './harness.js';
import { startSink } from './notify-sink.js';

function capturedLog(): { log: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      cb();
    },
  });
  return { log: pino({ level: 'info' }, out), lines };
}

test('rules: the test body, its defaults and every bad field', (t) => {
  t.deepEqual(parseTestNotification({}).severity, 'warning');
  t.is(parseTestNotification({ severity: 'critical', title: 'x', body: 'y' }).title, 'x');
  for (const [body, code, naming] of [
    [{ severity: 'bogus' }, 'INVALID_SEVERITY', '"bogus"'],
    [{ severity: 3 }, 'INVALID_SEVERITY', '3'],
    [{ title: 5 }, 'INVALID_FIELD', 'title'],
    [{ body: 'x'.repeat(5000) }, 'INVALID_FIELD', 'body'],
    [{ sevrity: 'info' }, 'UNKNOWN_FIELD', 'sevrity'],
  ] as const) {
    const err = t.throws(() => parseTestNotification(body as Record<string, unknown>)) as Error & { code: string };
    t.is(err.code, code);
    t.true(err.message.includes(naming), err.message);
  }
});

test('rules: dedup within the cooldown, a higher severity passes, the cooldown ends', (t) => {
  t.true(shouldSend(undefined, 'info', 0, 1000));
  t.false(shouldSend({ at: 0, severity: 'warning' }, 'warning', 999, 1000));
  t.false(shouldSend({ at: 0, severity: 'warning' }, 'info', 500, 1000));
  t.true(shouldSend({ at: 0, severity: 'warning' }, 'critical', 1, 1000));
  t.true(shouldSend({ at: 0, severity: 'warning' }, 'warning', 1000, 1000));
  const b = webhookBody({ severity: 'critical', title: 'Disk gone', body: 'loop3' }, 'h1');
  t.deepEqual(Object.keys(b), ['text']);
  t.regex(b.text, /^\[CRITICAL\] \*Disk gone\* \(objstore on h1\)\nloop3$/);
});

test('notifier: the webhook gets it, a repeat is suppressed (logged still), an escalation passes', async (t) => {
  const sink = await startSink(t);
  const { log, lines } = capturedLog();
  const n = new Notifier({ log, webhookUrl: sink.url, cooldownMs: 60_000 });
  const a = await n.deliver({ severity: 'warning', key: 'k', title: 'First', body: 'b' }, false);
  t.deepEqual(a, { delivered: ['log', 'webhook'], failed: [], suppressed: false, transports: ['log', 'webhook'] });
  const b = await n.deliver({ severity: 'warning', key: 'k', title: 'Again', body: 'b' }, false);
  t.true(b.suppressed);
  t.deepEqual(b.delivered, ['log']);
  const c = await n.deliver({ severity: 'critical', key: 'k', title: 'Worse', body: 'b' }, false);
  t.deepEqual(c.delivered, ['log', 'webhook']);
  const d = await n.deliver({ severity: 'info', key: 'other', title: 'Other key', body: 'b' }, false);
  t.deepEqual(d.delivered, ['log', 'webhook']);
  t.deepEqual(sink.bodies.map((x) => x.text.split('\n')[0]), ['[WARNING] *First*', '[CRITICAL] *Worse*', '[info] *Other key*'].map((s) => `${s} (objstore on ${hostname()})`));
  t.is(lines.filter((l) => l.includes('"notification"')).length, 4, 'every occurrence is logged');
  t.false(lines.some((l) => l.includes('SECRET-TOKEN')), 'the webhook URL is never logged');
});

test('notifier: a 500 and a hang are failures, answered within the timeout, logged without the URL', async (t) => {
  const sink = await startSink(t);
  const { log, lines } = capturedLog();
  const n = new Notifier({ log, webhookUrl: sink.url, timeoutMs: 500 });
  sink.mode = 'fail';
  const a = await n.deliver({ severity: 'warning', key: 'a', title: 'T', body: 'b' }, false);
  t.deepEqual(a.delivered, ['log']);
  t.deepEqual(a.failed, [{ transport: 'webhook', error: 'the webhook answered 500 Internal Server Error' }]);
  sink.mode = 'hang';
  const started = Date.now();
  const b = await n.deliver({ severity: 'warning', key: 'b', title: 'T', body: 'b' }, false);
  t.true(Date.now() - started < 1500, `answered after ${Date.now() - started} ms`);
  t.deepEqual(b.failed, [{ transport: 'webhook', error: 'no answer within 500 ms' }]);
  // notify() does not wait at all, whatever the webhook does
  const t0 = Date.now();
  n.notify({ severity: 'critical', key: 'c', title: 'T', body: 'b' });
  t.true(Date.now() - t0 < 50);
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  const dead = new Notifier({ log, webhookUrl: `http://127.0.0.1:${port}/x/SECRET-TOKEN` });
  const c = await dead.deliver({ severity: 'info', key: 'd', title: 'T', body: 'b' }, false);
  t.is(c.failed[0]!.transport, 'webhook');
  t.regex(c.failed[0]!.error, /cannot reach the webhook: .*ECONNREFUSED/);
  t.false(lines.some((l) => l.includes('SECRET-TOKEN')));
});

test('POST /$/notify/test on a store: delivered to the webhook, bypassing the cooldown; bad input 400', async (t) => {
  const sink = await startSink(t);
  const store = await startStore(t, { devices: [], provision: false, values: { chatWebhookUrl: sink.url } });
  const post = (body: string) => fetch(`${store.url}/$/notify/test`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  for (let i = 0; i < 2; i++) {
    const res = await post(JSON.stringify({ severity: 'critical', title: 'Hello', body: 'from the test' }));
    t.is(res.status, 200);
    t.deepEqual(await res.json(), { severity: 'critical', delivered: ['log', 'webhook'], failed: [], suppressed: false, transports: ['log', 'webhook'] });
  }
  await sink.waitFor(2);
  t.regex(sink.bodies[0]!.text, /^\[CRITICAL\] \*Hello\* .*\nfrom the test$/);
  const dflt = await post('');
  t.is(dflt.status, 200);
  t.is(((await dflt.json()) as { severity: string }).severity, 'warning');
  sink.mode = 'fail';
  const failed = (await (await post('{}')).json()) as { delivered: string[]; failed: unknown[] };
  t.deepEqual(failed.delivered, ['log']);
  t.deepEqual(failed.failed, [{ transport: 'webhook', error: 'the webhook answered 500 Internal Server Error' }]);
  for (const [body, code, naming] of [
    ['{"severity":"bogus"}', 'INVALID_SEVERITY', 'bogus'],
    ['{"severity":2}', 'INVALID_SEVERITY', '2'],
    ['{"title":[]}', 'INVALID_FIELD', 'title'],
    ['{"extra":1}', 'UNKNOWN_FIELD', 'extra'],
    ['{not json', 'INVALID_JSON', 'JSON'],
    ['[1]', 'INVALID_BODY', 'object'],
  ] as const) {
    const res = await post(body);
    t.is(res.status, 400, body);
    const e = ((await res.json()) as { error: { code: string; message: string } }).error;
    t.is(e.code, code, body);
    t.true(e.message.includes(naming), e.message);
  }
  const json = JSON.stringify(await (await post('{}')).json());
  t.false(json.includes('SECRET-TOKEN'), 'the URL is not answered');
});

test('POST /$/notify/test with no webhook set: the log only', async (t) => {
  const store = await startStore(t, { devices: [], provision: false });
  const res = await fetch(`${store.url}/$/notify/test`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"severity":"info"}' });
  t.deepEqual(await res.json(), { severity: 'info', delivered: ['log'], failed: [], suppressed: false, transports: ['log'] });
});
