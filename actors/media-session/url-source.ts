/**
 * Downloading a URL file source under the SSRF rules of protocols/media/url-policy.ts.
 *
 * - Every hop: the URL is checked (scheme, origin allow-list, no credentials), its host looked up
 *   (every address must pass: loopback, private, link-local… only inside MEDIA_FILE_NETWORKS), and
 *   the connection made to the address that was checked (the request's `lookup` is pinned to it,
 *   so a second DNS answer cannot send it elsewhere: no rebinding between check and connect).
 *   https keeps the host name for SNI and the certificate check. No proxy, no agent, no cookies;
 *   the client's headers are not forwarded.
 * - Redirects (301, 302, 303, 307, 308): at most 5, each checked again; https → http refused.
 * - Caps: the whole download (every hop and the body) within `timeoutMs`; a body over `maxBytes`
 *   is refused from its Content-Length, or cut when it grows past it (chunked or lying).
 * - Two phases, so a refusal is an error of `endpoint.create_file` itself: `open()` goes as far as
 *   the final answer's status and headers (before the command answers); `body()` reads the bytes
 *   while the endpoint is `buffering`.
 * - A cache of finished downloads per media thread (the sessions of a thread share it), keyed by
 *   the URL as given, kept for the command's `cache_ttl_secs` (0: neither read nor kept), at most
 *   CACHE_MAX_BYTES in all (oldest out first).
 */
import { lookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { parseIp } from '../../protocols/media/ip.js';
import { checkRedirect, checkUrl, hostOf, refuseAddress, type UrlPolicy } from '../../protocols/media/url-policy.js';

export interface UrlFetchOptions {
  policy: UrlPolicy;
  timeoutMs: number;
  maxBytes: number;
  /** Extra CA certificates (PEM) trusted for https sources (MEDIA_FILE_CA), beside the system's. */
  ca: string | null;
  cacheTtlSecs: number;
}

export type Opened = { ok: true; cached: boolean; body(): Promise<{ ok: true; bytes: Uint8Array } | { ok: false; message: string }> } | { ok: false; message: string };

/** Finished downloads kept per thread, at most this many bytes in all. */
export const CACHE_MAX_BYTES = 256 * 1024 * 1024;
const cache = new Map<string, { bytes: Uint8Array; expires: number }>();
let cachedBytes = 0;

function fromCache(key: string, now: number): Uint8Array | null {
  const e = cache.get(key);
  if (!e) return null;
  if (e.expires <= now) {
    cache.delete(key);
    cachedBytes -= e.bytes.byteLength;
    return null;
  }
  return e.bytes;
}

function keep(key: string, bytes: Uint8Array, ttlSecs: number): void {
  if (ttlSecs <= 0 || bytes.byteLength > CACHE_MAX_BYTES) return;
  const old = cache.get(key);
  if (old) {
    cache.delete(key);
    cachedBytes -= old.bytes.byteLength;
  }
  for (const [k, e] of cache) {
    if (cachedBytes + bytes.byteLength <= CACHE_MAX_BYTES) break;
    cache.delete(k);
    cachedBytes -= e.bytes.byteLength;
  }
  cache.set(key, { bytes, expires: Date.now() + ttlSecs * 1000 });
  cachedBytes += bytes.byteLength;
}

/** Check, connect and follow redirects up to the final answer's headers; or say why not. */
export async function openUrl(raw: string, o: UrlFetchOptions): Promise<Opened> {
  const first = checkUrl(raw, o.policy);
  if (!first.ok) return first;
  if (o.cacheTtlSecs > 0) {
    const hit = fromCache(first.value.href, Date.now());
    if (hit) return { ok: true, cached: true, body: async () => ({ ok: true, bytes: hit }) };
  }
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), o.timeoutMs);
  const fail = (message: string) => {
    clearTimeout(timer);
    abort.abort();
    return { ok: false as const, message };
  };
  const timedOut = () => `no complete answer within timeout_ms ${o.timeoutMs}`;
  let url = first.value;
  for (let hop = 1; ; hop++) {
    let address: string;
    try {
      address = await resolveChecked(url, o.policy);
    } catch (err) {
      return fail(`${hop > 1 ? 'a redirect led to ' : ''}${(err as Error).message}`);
    }
    if (abort.signal.aborted) return fail(timedOut());
    let res: IncomingMessage;
    try {
      res = await get(url, address, o, abort.signal);
    } catch (err) {
      return fail(abort.signal.aborted ? timedOut() : `${url.origin}: ${(err as Error).message}`);
    }
    const status = res.statusCode ?? 0;
    if ([301, 302, 303, 307, 308].includes(status)) {
      res.resume();
      const next = checkRedirect(url, res.headers.location, hop, o.policy);
      if (!next.ok) return fail(next.message);
      url = next.value;
      continue;
    }
    if (status !== 200) {
      res.resume();
      return fail(`${url.origin} answered ${status}${status >= 300 && status < 400 ? ' (a redirect this bridge does not follow)' : ''}`);
    }
    const declared = Number(res.headers['content-length'] ?? NaN);
    if (declared > o.maxBytes) {
      res.resume();
      return fail(`${url.origin}: the file is ${declared} bytes; the limit is ${o.maxBytes} (MEDIA_FILE_MAX_BYTES)`);
    }
    const key = first.value.href;
    return {
      ok: true,
      cached: false,
      body: () =>
        readBody(res, o.maxBytes, abort.signal).then(
          (bytes) => {
            clearTimeout(timer);
            keep(key, bytes, o.cacheTtlSecs);
            return { ok: true as const, bytes };
          },
          (err: Error) => fail(abort.signal.aborted && !err.message.includes('limit') ? timedOut() : `${url.origin}: ${err.message}`),
        ),
    };
  }
}

/** The host's addresses, every one allowed; the first one to connect to. */
async function resolveChecked(url: URL, policy: UrlPolicy): Promise<string> {
  const host = hostOf(url);
  let addresses: string[];
  if (parseIp(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch (err) {
      throw new Error(`${url.origin}: the host name does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  for (const a of addresses) {
    const why = refuseAddress(a, policy);
    if (why) throw new Error(`${url.origin}: ${host === a ? '' : `${host} resolves to `}${why}`);
  }
  if (addresses.length === 0) throw new Error(`${url.origin}: the host name has no address`);
  return addresses[0]!;
}

function get(url: URL, address: string, o: UrlFetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const family = address.includes(':') ? 6 : 4;
    const opts = {
      method: 'GET',
      signal,
      agent: false as const,
      headers: { 'User-Agent': 'hostd-media-bridge', Accept: 'audio/*, application/octet-stream;q=0.9, */*;q=0.1' },
      // Connect to the address that was checked, whatever a new lookup would say.
      lookup: ((_h: string, opt: { all?: boolean }, cb: (...a: unknown[]) => void) => (opt.all ? cb(null, [{ address, family }]) : cb(null, address, family))) as unknown as LookupFunction,
      ...(url.protocol === 'https:' && o.ca ? { ca: o.ca } : {}),
    };
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, opts, resolve);
    req.on('error', reject);
    req.end();
  });
}

function readBody(res: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let n = 0;
    const onAbort = () => {
      res.destroy();
      reject(new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    res.on('data', (b: Buffer) => {
      n += b.length;
      if (n > maxBytes) {
        signal.removeEventListener('abort', onAbort);
        res.destroy();
        reject(new Error(`the body grew past ${maxBytes} bytes, the limit (MEDIA_FILE_MAX_BYTES)`));
        return;
      }
      parts.push(b);
    });
    res.on('end', () => {
      signal.removeEventListener('abort', onAbort);
      const declared = Number(res.headers['content-length'] ?? NaN);
      if (Number.isFinite(declared) && declared !== n) return reject(new Error(`the body ended after ${n} of the ${declared} bytes announced`));
      resolve(new Uint8Array(Buffer.concat(parts, n)));
    });
    res.on('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(err);
    });
  });
}
