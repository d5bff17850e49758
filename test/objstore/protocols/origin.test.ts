/** protocols/objstore/origin.ts: which browser pages may drive the store (issue 21 item 11). */
import test from 'ava';
import { managementRefusal, originAllowed, parseAllowedOrigins } from '../../../protocols/objstore/origin.js';

test('originAllowed: none, the store\'s own, and allow-listed origins pass; others and "null" do not', (t) => {
  const allowed = ['https://ui.example:8443'];
  t.true(originAllowed(undefined, 'store.lan', allowed));
  t.true(originAllowed('', 'store.lan', allowed));
  t.true(originAllowed('http://store.lan', 'store.lan', allowed));
  t.true(originAllowed('https://STORE.lan', 'store.lan', allowed));
  t.true(originAllowed('http://127.0.0.1:8080', '127.0.0.1:8080', allowed));
  t.true(originAllowed('https://ui.example:8443', 'store.lan', allowed));
  t.false(originAllowed('https://ui.example', 'store.lan', allowed), 'the port is part of the origin');
  t.false(originAllowed('https://evil.example', 'store.lan', allowed));
  t.false(originAllowed('http://store.lan.evil.example', 'store.lan', allowed));
  t.false(originAllowed('null', 'store.lan', allowed));
  t.false(originAllowed('http://store.lan', undefined, []), 'no Host: only the allow-list');
});

test('managementRefusal: 403 for another origin, 415 for a state-changing request that is not JSON', (t) => {
  const base = { origin: undefined, host: 'h', contentType: undefined, hasBody: false };
  t.like(managementRefusal({ ...base, method: 'GET', origin: 'https://evil.example' }, []), { status: 403, code: 'ORIGIN_NOT_ALLOWED' });
  t.is(managementRefusal({ ...base, method: 'GET' }, []), null);
  t.is(managementRefusal({ ...base, method: 'GET', contentType: 'text/plain', hasBody: true }, []), null, 'reads change nothing');
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
    t.is(managementRefusal({ ...base, method }, []), null, `${method} without a body or a type`);
    t.is(managementRefusal({ ...base, method, contentType: 'application/json', hasBody: true }, []), null);
    t.is(managementRefusal({ ...base, method, contentType: 'Application/JSON; charset=utf-8', hasBody: true }, []), null);
    for (const contentType of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx']) {
      t.like(managementRefusal({ ...base, method, contentType, hasBody: false }, []), { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' }, `${method} ${contentType}`);
    }
    t.like(managementRefusal({ ...base, method, hasBody: true }, []), { status: 415, message: `${method} on the management API takes Content-Type: application/json (none was given)` });
  }
});

test('parseAllowedOrigins: comma-separated origins, lowercased; a path, a bare host or another scheme is refused naming it', (t) => {
  t.deepEqual(parseAllowedOrigins(''), []);
  t.deepEqual(parseAllowedOrigins(' https://UI.example:8443 , http://10.0.0.5 '), ['https://ui.example:8443', 'http://10.0.0.5']);
  t.deepEqual(parseAllowedOrigins('http://[::1]:8080'), ['http://[::1]:8080']);
  for (const bad of ['https://ui.example/', 'ui.example', 'ftp://ui.example', 'https://ui.example/app', '*']) {
    t.throws(() => parseAllowedOrigins(bad), { message: new RegExp(`is not an origin`) }, bad);
  }
});
