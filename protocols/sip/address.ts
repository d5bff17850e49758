/**
 * name-addr and addr-spec values (RFC 3261 §20.10, §25.1): From, To, Contact, Route,
 * Record-Route, Reply-To, Refer-To...: parse and format.
 *
 * Decisions:
 * - A display name is a quoted string or a run of tokens separated by LWS; anything else
 *   before '<' is an error (RFC 4475 baddn). No LWS is required before '<' (lwsdisp).
 * - Inside <...> the URI must not contain LWS (RFC 4475 badaspec).
 * - In addr-spec form every ';' after the URI starts a header parameter, and a URI holding
 *   ',' ';' or '?' must be in name-addr form, so an addr-spec with '?' is an error
 *   (RFC 4475 regbadct, cparam01 vs cparam02).
 * - The formatter always writes name-addr form (<...>), quoting the display name.
 */
import { fail, formatParams, isWs, parseParams, quote, Scanner, scanUnquoted } from './grammar.js';
import type { NameAddr } from './types.js';
import { formatUri, parseUri } from './uri.js';

export function parseNameAddr(text: string, what: string): NameAddr {
  const s = new Scanner(text.trim());
  let displayName: string | undefined;
  if (s.peek() === '"') {
    displayName = s.quoted(`${what} display name`);
    s.skipWs();
    if (s.peek() !== '<') fail(`${what}: expected < after the display name`);
  } else {
    const lt = scanUnquoted(s.text, (ch) => ch === '<');
    if (lt > 0) {
      const name = s.text.slice(0, lt).trim();
      if (!/^[A-Za-z0-9\-.!%*_+`'~]+([ \t]+[A-Za-z0-9\-.!%*_+`'~]+)*$/.test(name)) fail(`${what}: display name "${name.slice(0, 30)}" must be tokens or quoted`);
      displayName = name.replace(/[ \t]+/g, ' ');
      s.pos = lt;
    }
  }
  if (s.peek() === '<') {
    const close = s.text.indexOf('>', s.pos);
    if (close < 0) fail(`${what}: missing >`);
    const uri = parseUri(s.text.slice(s.pos + 1, close), `${what} URI`);
    s.pos = close + 1;
    const params = parseParams(s, what);
    return displayName === undefined ? { uri, params } : { displayName, uri, params };
  }
  // addr-spec: the URI runs to the first ';' (or LWS before it).
  let end = 0;
  while (end < s.text.length && s.text[end] !== ';' && !isWs(s.text[end])) end++;
  const spec = s.text.slice(0, end);
  if (spec.includes('?') || spec.includes(',')) fail(`${what}: a URI with '?' or ',' must be enclosed in <>`);
  const uri = parseUri(spec, `${what} URI`);
  s.pos = end;
  return { uri, params: parseParams(s, what) };
}

export function formatNameAddr(a: NameAddr): string {
  const name = a.displayName === undefined || a.displayName === '' ? '' : `${quote(a.displayName)} `;
  return `${name}<${formatUri(a.uri)}>${formatParams(a.params)}`;
}

/** The tag parameter, if any. */
export function tagOf(a: NameAddr): string | undefined {
  const t = a.params['tag'];
  return typeof t === 'string' ? t : undefined;
}

export function withTag(a: NameAddr, tag: string): NameAddr {
  return { ...a, params: { ...a.params, tag } };
}
