/**
 * The object store's fronts fed exact bytes over a raw TCP socket (node:net), for what fetch and
 * curl cannot send: here, a path with raw bytes that are not UTF-8 (issue 21 item 9). A real uWS
 * server on an ephemeral port with the store's handlers, no store behind (these answers need none).
 */
import { connect } from 'node:net';
import test from 'ava';
import { closeApp, listen, loadUws, type TemplatedApp, type us_listen_socket } from '../../runtime/http/uws.js';
import { handleManage } from '../../actors/objstore/http/manage.js';
import { handleObject } from '../../actors/objstore/http/objects.js';

let app: TemplatedApp;
let listening: us_listen_socket;
let port = 0;

test.before(async () => {
  app = loadUws().App();
  const nothing = {} as never;
  app.any('/$/*', (res, req) => handleManage(nothing, nothing, nothing, res, req));
  app.any('/*', (res, req) => handleObject(nothing, res, req));
  ({ socket: listening, port } = await listen(app, '127.0.0.1', 0));
});

test.after.always(() => closeApp(app, listening));

/** Send `bytes`, collect what comes back until the server closes or `ms` pass with nothing more. */
function exchange(bytes: Buffer, ms = 1500): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    const got: Buffer[] = [];
    let timer = setTimeout(() => sock.destroy(), ms);
    sock.on('data', (d) => {
      got.push(d);
      clearTimeout(timer);
      timer = setTimeout(() => sock.destroy(), 300);
    });
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(got).toString('latin1'));
    });
    sock.on('error', reject);
    sock.write(bytes);
  });
}

test('raw bytes that are not UTF-8 in an object path: 400 INVALID_PATH, for every method', async (t) => {
  for (const method of ['GET', 'HEAD', 'DELETE', 'PUT', 'OPTIONS']) {
    const head = Buffer.concat([Buffer.from(`${method} /b/a`), Buffer.from([0xff, 0xfe]), Buffer.from(`b HTTP/1.1\r\nHost: x\r\n${method === 'PUT' ? 'Content-Length: 0\r\n' : ''}\r\n`)]);
    const answer = await exchange(head);
    t.regex(answer, /^HTTP\/1\.1 400 /, method);
    if (method !== 'HEAD') t.regex(answer, /"code":"INVALID_PATH".*not valid UTF-8/, method);
  }
});
