/**
 * RFC 3261 §25.1 lexical rules shared by every parser of protocols/sip: character classes
 * (token, word, unreserved, ...), quoted strings, generic parameters (`;name=value`) and
 * splitting a header value into its comma-separated elements.
 *
 * Decisions:
 * - Everything works on already-unfolded header values (the message parser replaces each
 *   CRLF + WSP run by one SP, §7.3.1), so LWS here is just SP / HTAB.
 * - Errors are thrown as SyntaxError with a message naming what was wrong; the message parser
 *   is the only catcher and turns them into a typed 400 result. Nothing else escapes.
 */
import type { Params } from './types.js';

const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
const WORD_CHAR = /[A-Za-z0-9\-.!%*_+`'~()<>:\\"/[\]?{}]/;

export function isToken(s: string): boolean {
  return TOKEN.test(s);
}

export function isWord(s: string): boolean {
  if (s.length === 0) return false;
  for (const ch of s) if (!WORD_CHAR.test(ch)) return false;
  return true;
}

export function isWs(ch: string | undefined): boolean {
  return ch === ' ' || ch === '\t';
}

export function fail(what: string): never {
  throw new SyntaxError(what);
}

/** A cursor over one header value. */
export class Scanner {
  pos = 0;
  constructor(readonly text: string) {}

  get done(): boolean {
    return this.pos >= this.text.length;
  }
  peek(): string | undefined {
    return this.text[this.pos];
  }
  skipWs(): void {
    while (isWs(this.text[this.pos])) this.pos++;
  }
  /** Consume `ch` (after optional LWS on both sides, as SEMI/EQUAL/COMMA/SLASH allow). */
  eat(ch: string): boolean {
    const save = this.pos;
    this.skipWs();
    if (this.text[this.pos] === ch) {
      this.pos++;
      this.skipWs();
      return true;
    }
    this.pos = save;
    return false;
  }
  token(what: string): string {
    const start = this.pos;
    while (this.pos < this.text.length && TOKEN.test(this.text[this.pos] as string)) this.pos++;
    if (this.pos === start) fail(`${what}: expected a token at "${this.text.slice(start, start + 20)}"`);
    return this.text.slice(start, this.pos);
  }
  /** A quoted-string starting at the cursor; returns its content with quoted-pairs resolved. */
  quoted(what: string): string {
    if (this.text[this.pos] !== '"') fail(`${what}: expected a quoted string`);
    let out = '';
    for (let i = this.pos + 1; i < this.text.length; i++) {
      const ch = this.text[i] as string;
      if (ch === '\\') {
        if (i + 1 >= this.text.length) break;
        out += this.text[++i];
        continue;
      }
      if (ch === '"') {
        this.pos = i + 1;
        return out;
      }
      out += ch;
    }
    return fail(`${what}: unterminated quoted string`);
  }
  rest(): string {
    return this.text.slice(this.pos);
  }
}

/**
 * `*( SEMI generic-param )` from the cursor to the end of the text. Names are lower-cased;
 * values are tokens, IPv6 references or quoted strings (quotes resolved). An empty parameter
 * (`;;`) is an error (RFC 4475 badinv01).
 */
export function parseParams(s: Scanner, what: string): Params {
  const params: Params = {};
  for (;;) {
    s.skipWs();
    if (s.done) return params;
    if (!s.eat(';')) fail(`${what}: unexpected "${s.rest().slice(0, 20)}"`);
    const name = s.token(`${what} parameter name`).toLowerCase();
    if (s.eat('=')) {
      if (s.peek() === '"') params[name] = s.quoted(`${what} parameter ${name}`);
      else params[name] = paramValue(s, `${what} parameter ${name}`);
    } else params[name] = null;
  }
}

function paramValue(s: Scanner, what: string): string {
  if (s.peek() === '[') {
    const end = s.text.indexOf(']', s.pos);
    if (end < 0) fail(`${what}: unterminated IPv6 reference`);
    const v = s.text.slice(s.pos, end + 1);
    s.pos = end + 1;
    return v;
  }
  return s.token(what);
}

/** Serialize parameters as `;name=value`, quoting values that are not tokens. */
export function formatParams(params: Params): string {
  let out = '';
  for (const [k, v] of Object.entries(params)) {
    if (v === null) out += `;${k}`;
    else out += `;${k}=${isToken(v) || /^\[[0-9A-Fa-f:.]+\]$/.test(v) ? v : quote(v)}`;
  }
  return out;
}

export function quote(v: string): string {
  return `"${v.replace(/(["\\])/g, '\\$1')}"`;
}

/**
 * Walk `text` outside quoted strings (quoted-pairs skipped): `visit` sees every other
 * character with its index and may stop the walk by returning true. Returns the stop index or -1.
 */
export function scanUnquoted(text: string, visit: (ch: string, i: number) => boolean | void): number {
  let inQuote = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (inQuote) {
      if (ch === '\\') i++;
      else if (ch === '"') inQuote = false;
    } else if (ch === '"') inQuote = true;
    else if (visit(ch, i)) return i;
  }
  return -1;
}

/**
 * Split a header value at top-level commas: not inside a quoted string (with its
 * quoted-pairs) and not inside <...>. Elements are trimmed; an empty element is an error.
 */
export function splitList(value: string, what: string): string[] {
  const out: string[] = [];
  let start = 0;
  let inAngle = false;
  scanUnquoted(value, (ch, i) => {
    if (ch === '<') inAngle = true;
    else if (ch === '>') inAngle = false;
    else if (ch === ',' && !inAngle) {
      out.push(value.slice(start, i).trim());
      start = i + 1;
    }
  });
  out.push(value.slice(start).trim());
  if (out.some((e) => e.length === 0)) fail(`${what}: empty element in a comma-separated list`);
  return out;
}
