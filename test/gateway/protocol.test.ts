/** protocols/gateway: the control envelope, command checks, call answers and route matching. */
import test from 'ava';
import { parseFrame, gatewayFailure, MAX_COMMAND_BYTES } from '../../protocols/gateway/envelope.js';
import { checkCallAnswer, checkGatewayCommand, isMediaMethod } from '../../protocols/gateway/commands.js';
import { CopiedRoutes, decideRoute, RouteTable, routeUser, type Route } from '../../protocols/gateway/routes.js';

test('parseFrame: commands, answers and every invalid shape', (t) => {
  t.deepEqual(parseFrame('{"id":"1","method":"route.list"}'), { kind: 'command', request: { id: '1', method: 'route.list', params: {} } });
  t.deepEqual(parseFrame('{"id":"g:1","result":{"action":"answer"}}'), { kind: 'answer', answer: { id: 'g:1', result: { action: 'answer' } } });
  t.deepEqual(parseFrame('{"id":"g:2","error":{"code":"X","message":"no"}}'), { kind: 'answer', answer: { id: 'g:2', error: { code: 'X', message: 'no' } } });
  const bad = (text: string) => {
    const f = parseFrame(text);
    if (f.kind !== 'invalid') throw new Error(`not invalid: ${text}`);
    return f.reply;
  };
  t.is(bad('{nope').error.code, 'PARSE_ERROR');
  t.is(bad('[1]').error.code, 'INVALID_REQUEST');
  t.is(bad('{"method":"x"}').error.code, 'INVALID_REQUEST');
  t.is(bad('{"id":"1"}').error.code, 'INVALID_REQUEST');
  t.is(bad('{"id":"1","method":"x","params":[]}').error.code, 'INVALID_REQUEST');
  t.is(bad('{"id":1,"result":{}}').error.code, 'INVALID_REQUEST');
  t.deepEqual(bad('{"id":"g:1","result":[]}'), gatewayFailure('g:1', 'INVALID_REQUEST', '`result` must be an object'));
  t.regex(bad(JSON.stringify({ id: '1', method: 'x', params: { pad: 'x'.repeat(MAX_COMMAND_BYTES) } })).error.message, /limit/);
});

test('checkGatewayCommand: route.register', (t) => {
  const ok = checkGatewayCommand('route.register', { routes: [{ match: 'exact', value: 'alice' }, { match: 'userPrefix', value: '+3312' }] });
  t.true(ok.ok);
  const msg = (params: Record<string, unknown>) => {
    const r = checkGatewayCommand('route.register', params);
    if (r.ok) throw new Error('accepted');
    t.is(r.code, 'INVALID_PARAMS');
    return r.message;
  };
  t.regex(msg({}), /routes is required/);
  t.regex(msg({ routes: 'alice' }), /routes must be an array/);
  t.regex(msg({ routes: [{ match: 'regex', value: 'a' }] }), /routes\[0\]\.match must be one of exact, userPrefix/);
  t.regex(msg({ routes: [{ match: 'exact' }] }), /routes\[0\]\.value is required/);
  t.regex(msg({ routes: [{ match: 'exact', value: '' }] }), /routes\[0\]\.value must not be empty/);
  t.regex(msg({ routes: [{ match: 'exact', value: 'a', extra: 1 }] }), /routes\[0\]: unknown field extra/);
  t.regex(msg({ routes: [7] }), /routes\[0\] must be an object/);
  t.regex(msg({ routes: [], more: true }), /unknown parameter more/);
  t.regex(msg({ routes: Array.from({ length: 1001 }, (_, i) => ({ match: 'exact', value: `u${i}` })) }), /at most 1000/);
});

test('checkGatewayCommand: sip commands', (t) => {
  const sdp = 'v=0\r\n';
  t.true(checkGatewayCommand('sip.createOutbound', { requestUri: 'sip:bob@127.0.0.1:5070', sdp, headers: { 'X-App': 'a' }, from: '<sip:a@b>', auth: { username: 'u', password: 'p' } }).ok);
  const msg = (method: string, params: Record<string, unknown>) => {
    const r = checkGatewayCommand(method, params);
    if (r.ok) throw new Error('accepted');
    return `${r.code}: ${r.message}`;
  };
  t.regex(msg('sip.createOutbound', { sdp }), /INVALID_PARAMS: requestUri is required/);
  t.regex(msg('sip.createOutbound', { requestUri: 'tel:+123', sdp }), /INVALID_PARAMS: requestUri must be a sip: URI/);
  t.regex(msg('sip.createOutbound', { requestUri: 'sip:b@h' }), /sdp is required/);
  t.regex(msg('sip.createOutbound', { requestUri: 'sip:b@h', sdp, headers: { 'Bad Name': 'x' } }), /headers: "Bad Name" is not a header name/);
  t.regex(msg('sip.createOutbound', { requestUri: 'sip:b@h', sdp, headers: { X: 'a\r\nB: c' } }), /headers\.X must be a one-line string/);
  t.regex(msg('sip.createOutbound', { requestUri: 'sip:b@h', sdp, headers: ['x'] }), /headers must be an object/);
  t.regex(msg('sip.createOutbound', { requestUri: 'sip:b@h', sdp, auth: { username: 'u' } }), /auth\.password is required/);
  t.true(checkGatewayCommand('sip.createOutbound', { requestUri: 'sip:b@h', sdp, callId: 'abc-1@host' }).ok);
  t.regex(msg('sip.createOutbound', { requestUri: 'sip:b@h', sdp, callId: 'a b' }), /callId must be a SIP Call-ID/);
  t.regex(msg('sip.createOutbound', { requestUri: 'sip:b@h', sdp, callId: 'a@b@c' }), /callId must be a SIP Call-ID/);
  t.regex(msg('sip.createOutbound', { requestUri: 'sip:b@h', sdp, callId: '' }), /callId must be a string of 1 to 256/);
  t.regex(msg('sip.cancelOutbound', {}), /callId is required/);
  t.regex(msg('sip.bye', { callId: 5 }), /callId must be a string; got number 5/);
  t.regex(msg('sip.reinvite', { callId: 'c' }), /sdp is required/);
  t.regex(msg('sip.dial', {}), /METHOD_NOT_FOUND: unknown method sip.dial/);
  t.true(checkGatewayCommand('sip.calls', {}).ok);
  t.true(checkGatewayCommand('route.list', {}).ok);
});

test('isMediaMethod: the media families go to the media link', (t) => {
  for (const m of ['session.create', 'session.destroy', 'endpoint.rtp.create_from_offer', 'endpoint.create_tone', 'recording.start', 'mixer.add']) t.true(isMediaMethod(m), m);
  for (const m of ['sip.bye', 'route.register', 'sessions', 'endpoints']) t.false(isMediaMethod(m), m);
});

test('checkCallAnswer: answer and reject, and what is refused', (t) => {
  t.deepEqual(checkCallAnswer({ action: 'answer', sdp: 'v=0' }), { ok: true, answer: { action: 'answer', sdp: 'v=0' } });
  t.deepEqual(checkCallAnswer({ action: 'reject', status: 486 }), { ok: true, answer: { action: 'reject', status: 486 } });
  t.deepEqual(checkCallAnswer({ action: 'reject', status: 603, reason: 'Decline' }), { ok: true, answer: { action: 'reject', status: 603, reason: 'Decline' } });
  const err = (v: Record<string, unknown>) => {
    const r = checkCallAnswer(v);
    if (r.ok) throw new Error('accepted');
    return r.error;
  };
  t.regex(err({}), /action must be one of answer, reject/);
  t.regex(err({ action: 'answer' }), /sdp is required/);
  t.regex(err({ action: 'reject', status: 200 }), /status must be between 300 and 699; got 200/);
  t.regex(err({ action: 'reject', status: 700 }), /status must be between 300 and 699/);
  t.regex(err({ action: 'reject', status: 486.5 }), /integer/);
  t.regex(err({ action: 'reject', status: 486, reason: 'a\r\nb' }), /one line/);
  t.regex(err({ action: 'answer', sdp: 'v=0', receiverUrl: 'http://x' }), /unknown parameter receiverUrl/);
});

test('RouteTable: replace, conflict, release, exact before longest prefix', (t) => {
  const r = new RouteTable();
  t.deepEqual(r.register('c1', [{ match: 'exact', value: 'alice' }, { match: 'userPrefix', value: '+33' }]), { ok: true });
  t.deepEqual(r.register('c2', [{ match: 'userPrefix', value: '+3312' }]), { ok: true });
  t.deepEqual(r.lookup('alice'), { owner: 'c1', route: { match: 'exact', value: 'alice' } });
  t.is(r.lookup('+33123')?.owner, 'c2', 'the longest prefix wins');
  t.is(r.lookup('+3399')?.owner, 'c1');
  t.is(r.lookup('+3')?.owner, undefined);
  t.is(r.lookup('alicex'), undefined, 'exact is exact');
  // conflict: nothing changes
  t.deepEqual(r.register('c2', [{ match: 'userPrefix', value: '+9' }, { match: 'exact', value: 'alice' }]), { ok: false, route: { match: 'exact', value: 'alice' }, owner: 'c1' });
  t.deepEqual(r.routesOf('c2'), [{ match: 'userPrefix', value: '+3312' }]);
  // an exact and a prefix of the same value are different routes
  t.deepEqual(r.register('c2', [{ match: 'userPrefix', value: 'alice' }]), { ok: true });
  t.is(r.lookup('+33123')?.owner, 'c1', 'c2 replaced its set: +3312 is gone');
  t.is(r.lookup('alice2')?.owner, 'c2');
  t.is(r.lookup('alice')?.owner, 'c1');
  // re-registering one's own route, duplicates folded
  t.deepEqual(r.register('c1', [{ match: 'exact', value: 'alice' }, { match: 'exact', value: 'alice' }]), { ok: true });
  t.deepEqual(r.routesOf('c1'), [{ match: 'exact', value: 'alice' }]);
  t.is(r.size, 2);
  r.release('c1');
  t.is(r.lookup('alice')?.owner, 'c2', 'after c1 closes, alice falls to c2\'s prefix');
  t.deepEqual(r.register('c2', [{ match: 'exact', value: 'alice' }]), { ok: true }, 'the released route is free');
  t.deepEqual(r.register('c2', []), { ok: true });
  t.is(r.size, 0);
  t.deepEqual(r.routesOf('c2'), []);
});

test('routeUser and decideRoute', (t) => {
  t.is(routeUser({ uriUser: 'a', toUser: 'b' }), 'a');
  t.is(routeUser({ uriUser: '', toUser: 'b' }), 'b');
  t.is(routeUser({}), '');
  const r = new RouteTable();
  r.register('c1', [{ match: 'exact', value: 'alice' }]);
  t.deepEqual(decideRoute({ method: 'INVITE', uriUser: 'alice' }, r, 'gw1', true), { kind: 'route', owner: 'c1', body: { action: 'route', data: { tag: 'gw1' } } });
  t.is(decideRoute({ method: 'INVITE', uriUser: 'bob' }, r, 'gw1', true).kind, 'elsewhere');
  t.is(decideRoute({ method: 'MESSAGE', uriUser: 'alice' }, r, 'gw1', true).kind, 'elsewhere');
  t.is(decideRoute({ method: 'INVITE' }, r, 'gw1', true).kind, 'elsewhere');
  t.is(decideRoute({}, r, 'gw1', true).kind, 'elsewhere');
  t.is(decideRoute({ method: 'INVITE', uriUser: 'alice' }, r, 'gw1', false).kind, 'elsewhere', 'not accepting: not ours');
});

test('CopiedRoutes: a copy of a table (all(), accepting) selects the tag exactly when decideRoute routes', (t) => {
  // a small alphabet so prefixes, exact routes and users collide often
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
  const word = () => Array.from({ length: 1 + rnd(4) }, () => 'ab1'[rnd(3)]).join('');
  const empty = new CopiedRoutes();
  t.is(empty.select({ method: 'INVITE', uriUser: 'a' }), undefined, 'no copy: ask');
  let compared = 0;
  for (let round = 0; round < 200; round++) {
    const table = new RouteTable();
    for (let owner = 0; owner < 1 + rnd(3); owner++) {
      const routes: Route[] = Array.from({ length: rnd(5) }, () => ({ match: rnd(2) ? 'exact' : 'userPrefix', value: word() }));
      table.register(`c${owner}`, routes); // a conflict leaves the owner out, as the gateway does
    }
    const accepting = rnd(5) > 0;
    const c = new CopiedRoutes();
    c.set({ tag: 'gw', routes: table.all(), accepting });
    t.is(c.size, table.size);
    for (let q = 0; q < 20; q++) {
      const query = { method: rnd(6) ? 'INVITE' : 'MESSAGE', uriUser: rnd(4) ? word() : '', toUser: word() };
      const d = decideRoute(query, table, 'gw', accepting);
      t.is(c.select(query), d.kind === 'route' ? 'gw' : undefined, JSON.stringify({ query, routes: table.all(), accepting }));
      compared++;
    }
  }
  t.is(compared, 4000);
  const c = new CopiedRoutes();
  c.set({ tag: 'gw', routes: [{ match: 'exact', value: 'a' }], accepting: true });
  c.set({ tag: 'gw', routes: [{ match: 'exact', value: 'b' }], accepting: true });
  t.is(c.select({ method: 'INVITE', uriUser: 'a' }), undefined, 'a newer copy replaces the older');
  t.is(c.select({ method: 'INVITE', uriUser: 'b' }), 'gw');
});
