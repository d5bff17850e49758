/**
 * GET /$/ui and /$/ui/*: the web UI's bundle (built from ui/ by ui/build.mjs into dist/ui), served
 * from memory. It owns the static-file rules: the Content-Type of each file; Cache-Control
 * `immutable` for the content-hashed assets (app-<hash>.js/.css: a new build has new names) and
 * `no-cache` for index.html (revalidated every time, so a new build is seen at once); an ETag on
 * every file and 304 for a matching If-None-Match; 404 for a name the bundle does not have; and
 * 400 for a path that tries to leave the bundle (`..`, `.`, a backslash, a NUL or an encoded `/`).
 * The bundle is one flat folder, so a name is one segment. The UI uses hash routes (#/volumes),
 * so no other path needs index.html.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeParam } from '../../../runtime/http/router.js';
import { StoreError } from '../store/context.js';
import { header, send, sendHead, writeHead, type Headers, type Reply } from './respond.js';
import { route, type ManageCall, type ManageRoute } from './route.js';

/** dist/ui, beside the compiled server (this file is dist/actors/objstore/http/ui.js). */
export const UI_DIR = fileURLToPath(new URL('../../../ui/', import.meta.url));

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** A content-hashed name, as esbuild writes them (`[name]-[hash]`: eight of A-Z and 0-9). */
const HASHED = /-[A-Z0-9]{8}\.[a-z]+$/;

export const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The page may load only its own bundle and talk only to its own store: no inline script, no
 * other origin, no framing (a click-jacked "Wipe and provision" is the risk).
 */
const INDEX_CSP = "default-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export interface Asset {
  body: Buffer;
  headers: Headers;
  etag: string;
}

/** The bundles read, by folder (one in the daemon: UI_DIR). */
const bundles = new Map<string, Map<string, Asset>>();

function assetOf(name: string, body: Buffer): Asset {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  const headers: Headers = [
    ['Content-Type', TYPES[extname(name)] ?? 'application/octet-stream'],
    ['Cache-Control', HASHED.test(name) ? IMMUTABLE : 'no-cache'],
    ['ETag', etag],
    ['X-Content-Type-Options', 'nosniff'],
  ];
  if (name === 'index.html') headers.push(['Content-Security-Policy', INDEX_CSP], ['Referrer-Policy', 'no-referrer']);
  return { body, headers, etag };
}

/**
 * The bundle's files, read once (it changes only with a new build, which restarts the daemon);
 * null while the folder has no index.html (not built: asked again at the next request).
 */
export function loadBundle(dir = UI_DIR): Map<string, Asset> | null {
  const known = bundles.get(dir);
  if (known) return known;
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isFile()).map((d) => d.name);
  } catch {
    return null;
  }
  if (!names.includes('index.html')) return null;
  const bundle = new Map(names.map((n) => [n, assetOf(n, readFileSync(join(dir, n)))]));
  bundles.set(dir, bundle);
  return bundle;
}

/** The file a raw `*` of /$/ui/* names ('' is index.html), or a 400 for one that leaves the bundle. */
export function fileOf(raw: string): string {
  if (raw === '') return 'index.html';
  const name = decodeParam(raw);
  if (name === null) throw new StoreError(400, 'INVALID_PATH', `UI path ${JSON.stringify(raw)} is not valid percent-encoding`);
  const segments = name.split('/');
  if (segments.some((s) => s === '..' || s === '.') || /[\\\0]/.test(name) || raw.split('/').length !== segments.length) {
    throw new StoreError(400, 'INVALID_PATH', `UI path ${JSON.stringify(raw)} refused: it leaves the UI bundle`);
  }
  return name;
}

/** If-None-Match names this ETag (or is `*`): the client's copy is current. */
function notModified(call: ManageCall, etag: string): boolean {
  const inm = header(call.r.req, 'if-none-match');
  if (!inm) return false;
  return inm.trim() === '*' || inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

function serve(call: ManageCall, raw: string, head: boolean): void {
  const files = loadBundle();
  if (!files) throw new StoreError(503, 'UI_NOT_BUILT', `the web UI bundle is not built (no index.html in ${UI_DIR}): run npm run build`);
  const name = fileOf(raw);
  const asset = files.get(name);
  if (!asset) throw new StoreError(404, 'NOT_FOUND', `the web UI has no file ${JSON.stringify(name)}`);
  const { r } = call;
  if (notModified(call, asset.etag)) {
    if (r.aborted || r.done) return;
    r.done = true;
    // 304: the validators and caching headers of the 200, no body and no Content-Type.
    writeHead(r, 304, asset.headers.filter(([k]) => k !== 'Content-Type'), false);
    r.res.end();
    return;
  }
  if (head) return sendHead(r, 200, asset.headers, asset.body.byteLength);
  send(r, 200, asset.body, asset.headers);
}

export const uiRoutes: ManageRoute[] = [
  route('GET', '/$/ui', (call) => serve(call, '', false)),
  route('HEAD', '/$/ui', (call) => serve(call, '', true)),
  route('GET', '/$/ui/*', (call, params) => serve(call, params['*'], false)),
  route('HEAD', '/$/ui/*', (call, params) => serve(call, params['*'], true)),
];
