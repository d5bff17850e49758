/**
 * YAML as the deployment service reads it (Chart.yaml and values files): one document, YAML 1.1
 * as Helm reads it (`yes`/`on` are booleans, `0755` is octal, `<<` merge keys work), with the tags
 * that have no JSON form (timestamp, binary, set, omap, pairs) read as plain strings, duplicate keys
 * refused, a size cap before parsing, a cap on flow nesting before parsing (the parser recurses per
 * level, and near the stack's end V8 aborts the process instead of throwing, so `[[[[…` is counted
 * first: brackets outside quotes and comments, at most MAX_FLOW_DEPTH deep) and an alias cap while
 * converting (a billion-laughs document stops at `maxAliasCount` alias expansions instead of filling
 * memory). A refusal names the file and the line and column. Pure.
 */
import { parseDocument, type Document, type Tags } from 'yaml';
import { refuse, type RefusalCode } from './errors.js';

/** Tags whose JavaScript value JSON cannot carry; without them the value stays a string. */
const NON_JSON_TAGS = new Set(['timestamp', 'binary', 'set', 'omap', 'pairs'].map((t) => `tag:yaml.org,2002:${t}`));

export interface YamlLimits {
  /** largest file accepted, in bytes */
  maxBytes: number;
  /** alias expansions allowed while converting to JSON (yaml's maxAliasCount) */
  maxAliasCount: number;
}

/** Limits for values files: 1 MiB, 100 aliases (the yaml package's default for the latter). */
export const VALUES_LIMITS: YamlLimits = { maxBytes: 1024 * 1024, maxAliasCount: 100 };

/** UTF-8 text of a file, without a byte-order mark; invalid UTF-8 is refused. */
export function utf8Text(bytes: Uint8Array | string, what: string, limits: YamlLimits, code: RefusalCode): string {
  const size = typeof bytes === 'string' ? Buffer.byteLength(bytes, 'utf8') : bytes.byteLength;
  if (size > limits.maxBytes) refuse(400, code, `${what} is ${size} bytes; the limit is ${limits.maxBytes}`);
  if (typeof bytes === 'string') return bytes.replace(/^\uFEFF/, '');
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return refuse(400, code, `${what} is not valid UTF-8`);
  }
}

/** Deepest flow nesting ('[' and '{') accepted; real values files stay in single digits. */
export const MAX_FLOW_DEPTH = 64;

/** The line where flow nesting first exceeds `max`, or null. Quoted strings and comments are skipped. */
export function flowTooDeep(text: string, max = MAX_FLOW_DEPTH): number | null {
  let depth = 0;
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') line++;
    else if (c === '[' || c === '{') {
      if (++depth > max) return line;
    } else if (c === ']' || c === '}') depth = Math.max(0, depth - 1);
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1] as string))) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
    } else if (c === '"' || (c === "'" && (i === 0 || /[\s[{,:]/.test(text[i - 1] as string)))) {
      for (i++; i < text.length && text[i] !== c; i++) {
        if (text[i] === '\n') line++;
        else if (c === '"' && text[i] === '\\') i++;
      }
    }
  }
  return null;
}

/** Parse one YAML document; syntax errors refuse with `<what> is not valid YAML: line L, column C: …`. */
export function parseYaml(text: string, what: string, code: RefusalCode): Document.Parsed {
  const deep = flowTooDeep(text);
  if (deep !== null) refuse(400, code, `${what} is not valid YAML: line ${deep}: nested deeper than ${MAX_FLOW_DEPTH} levels`);
  let doc: Document.Parsed;
  try {
    doc = parseDocument(text, {
      version: '1.1',
      merge: true,
      uniqueKeys: true,
      prettyErrors: true,
      customTags: (tags: Tags) => tags.filter((t) => typeof t === 'string' || !NON_JSON_TAGS.has(t.tag)),
    });
  } catch (e) {
    // the parser recurses on nesting: a pathologically deep document ends here
    return refuse(400, code, `${what} could not be parsed: ${e instanceof Error ? e.message : String(e)}`);
  }
  const err = doc.errors[0];
  if (err !== undefined) {
    const pos = err.linePos?.[0];
    const where = pos ? `line ${pos.line}, column ${pos.col}: ` : '';
    const first = (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    refuse(400, code, `${what} is not valid YAML: ${where}${first}`);
  }
  return doc;
}

/** The document as plain JSON-able data, with the alias cap applied. */
export function toPlain(doc: Document.Parsed, what: string, limits: YamlLimits, code: RefusalCode): unknown {
  try {
    return doc.toJS({ maxAliasCount: limits.maxAliasCount });
  } catch (e) {
    const text = e instanceof Error ? e.message : String(e);
    if (/excessive alias count/i.test(text)) return refuse(400, code, `${what} expands more than ${limits.maxAliasCount} aliases (a YAML alias bomb is refused)`);
    return refuse(400, code, `${what} is not valid YAML: ${text}`);
  }
}

export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `a ${typeof v}`;
}
