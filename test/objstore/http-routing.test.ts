/**
 * How the object store's two fronts route (http/manage.ts, http/objects.ts on the shared router),
 * for the answers that need no store behind them: an unknown management path (404), a known one
 * with another method (405 with Allow, the maintenance paths keeping their messages), trailing
 * slashes, and the object API's 405. The store's real
 * port-80 server on an ephemeral port; the store, volumes and scheduler are never reached on these paths.
 */
import test from 'ava';
import { startFront } from './front-server.js';

let front: Awaited<ReturnType<typeof startFront>>;
let base = '';

test.before(async () => {
  front = await startFront();
  base = `http://127.0.0.1:${front.port}`;
});

test.after.always(() => front?.close());

async function call(method: string, path: string): Promise<{ status: number; allow: string | null; body: string }> {
  const res = await fetch(base + path, { method });
  return { status: res.status, allow: res.headers.get('allow'), body: await res.text() };
}
const error = (code: string, message: string) => JSON.stringify({ error: { code, message } });

test('an unknown management path is 404 NO_SUCH_ENDPOINT, naming method and path', async (t) => {
  for (const [method, path] of [
    ['GET', '/$/nope'],
    ['GET', '/$/faults/x'],
    ['GET', '/$/status/'],
    ['GET', '/$/volumes/'],
    ['POST', '/$/volumes/1/drain/x'],
    ['GET', '/$/identify'],
  ] as const) {
    const r = await call(method, path);
    t.is(r.status, 404, path);
    t.is(r.body, error('NO_SUCH_ENDPOINT', `no management endpoint ${method} ${path}`));
    t.is(r.allow, null);
  }
});

test('a known management path with another method is 405 with Allow', async (t) => {
  const cases: Array<[string, string, string, string]> = [
    ['POST', '/$/status', 'GET', 'POST is not allowed on /$/status (GET)'],
    ['DELETE', '/$/volumes', 'GET, POST', 'DELETE is not allowed on /$/volumes (GET, POST)'],
    ['PATCH', '/$/volumes/3', 'GET, PUT, DELETE', 'PATCH is not allowed on /$/volumes/{id} (GET, PUT, DELETE)'],
    ['PUT', '/$/volumes/3/drain', 'POST, GET, DELETE', 'PUT is not allowed on /$/volumes/{id}/drain (POST starts, GET shows, DELETE cancels)'],
    ['PATCH', '/$/rebalance', 'GET, POST, PUT, DELETE', 'PATCH is not allowed on /$/rebalance (GET, POST, PUT, DELETE)'],
    ['PUT', '/$/verify-volumes', 'GET, POST, DELETE', 'PUT is not allowed on /$/verify-volumes (GET, POST, DELETE)'],
    ['DELETE', '/$/faults/accept-loss', 'POST', 'DELETE is not allowed on /$/faults/accept-loss (POST)'],
    ['GET', '/$/volumes/3/identify', 'POST, DELETE', 'GET is not allowed on /$/volumes/{id}/identify (POST, DELETE)'],
  ];
  for (const [method, path, allow, message] of cases) {
    const r = await call(method, path);
    t.is(r.status, 405, `${method} ${path}`);
    t.is(r.allow, allow);
    t.is(r.body, error('METHOD_NOT_ALLOWED', message));
  }
});

test('the object API: methods it does not have are 405 with the spec Allow; POST is 400', async (t) => {
  const r = await call('PATCH', '/b/o');
  t.is(r.status, 405);
  t.is(r.allow, 'GET, HEAD, PUT, DELETE, OPTIONS');
  t.is(r.body, error('METHOD_NOT_ALLOWED', 'PATCH is not supported on object paths'));
  const post = await call('POST', '/b/o');
  t.is(post.status, 400);
  t.is(post.body, error('POST_NOT_SUPPORTED', 'POST is not supported on object paths: store an object with PUT'));
});
