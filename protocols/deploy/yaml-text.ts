/**
 * YAML as the deployment service reads it (Chart.yaml and values files): one document, YAML 1.1
 * as Helm reads it (`yes`/`on` are booleans, `0755` is octal, `<<` merge keys work), with the tags
 * that have no JSON form (timestamp, binary, set, omap, pairs) read as plain strings, duplicate keys
 * refused, a size cap before parsing, a cap of 64 levels of nesting checked before the document
 * is composed (composing recurses per level, and near the stack's end V8 may abort the process
 * instead of throwing: seen with 20 000 nested '['; a quick bracket scan first, then the syntax
 * tree, which also sees block nesting such as `- - - - x`) and an alias cap while
 * converting (a billion-laughs document stops at `maxAliasCount` alias expansions instead of filling
 * memory). A refusal names the file and the line and column. Pure.
 */
import { Composer, LineCounter, Parser, type CST, type Document, type Tags } from 'yaml';
import { Refused, refuse, type RefusalCode } from './errors.js';

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

/** Deepest nesting of collections (flow or block) accepted; real values files stay in single digits. */
export const MAX_DEPTH = 64;

/**
 * The line where flow nesting ('[' and '{' outside quotes and comments) first exceeds `max`, or
 * null: a linear scan that stops early, so `[[[[…` costs nothing. It may miss nesting that quoting
 * hides from it; the tree check below does not.
 */
export function flowTooDeep(text: string, max = MAX_DEPTH): number | null {
  let depth = 0;
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    const atTokenStart = i === 0 || /[\s[{,:]/.test(text[i - 1] as string);
    if (c === '\n') line++;
    else if (c === '[' || c === '{') {
      if (++depth > max) return line;
    } else if (c === ']' || c === '}') depth = Math.max(0, depth - 1);
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1] as string))) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
    } else if ((c === '"' || c === "'") && atTokenStart) {
      for (i++; i < text.length && text[i] !== c; i++) {
        if (text[i] === '\n') line++;
        else if (c === '"' && text[i] === '\\') i++;
      }
    }
  }
  return null;
}

/**
 * The offset of the first collection nested deeper than `max` in the CST, or null. yaml's lexer
 * and parser keep their own stacks (no recursion); its composer recurses per level, so the tree
 * is measured here, iteratively, before composing.
 */
function deepCollection(tokens: readonly CST.Token[], max: number): number | null {
  const stack: [unknown, number][] = tokens.map((t) => [t, 0]);
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, depth] = next;
    if (typeof node !== 'object' || node === null) continue;
    const t = node as { type?: string; offset?: number; value?: unknown; items?: { key?: unknown; value?: unknown }[] };
    if (t.type === 'document') stack.push([t.value, depth]);
    else if (t.type === 'block-map' || t.type === 'block-seq' || t.type === 'flow-collection') {
      if (depth + 1 > max) return t.offset ?? 0;
      for (const item of t.items ?? []) stack.push([item.key, depth + 1], [item.value, depth + 1]);
    }
  }
  return null;
}

/** Parse one YAML document; syntax errors refuse with `<what> is not valid YAML: line L, column C: …`. */
export function parseYaml(text: string, what: string, code: RefusalCode): Document.Parsed {
  const notYaml = (line: number, col: number | null, why: string): never =>
    refuse(400, code, `${what} is not valid YAML: line ${line}${col === null ? '' : `, column ${col}`}: ${why}`);
  const flowLine = flowTooDeep(text);
  if (flowLine !== null) notYaml(flowLine, null, `nested deeper than ${MAX_DEPTH} levels`);
  const lines = new LineCounter();
  let doc: Document.Parsed | null = null;
  try {
    const tokens = Array.from(new Parser(lines.addNewLine).parse(text));
    const deep = deepCollection(tokens, MAX_DEPTH);
    if (deep !== null) notYaml(lines.linePos(deep).line, null, `nested deeper than ${MAX_DEPTH} levels`);
    const composer = new Composer({
      version: '1.1',
      merge: true,
      uniqueKeys: true,
      customTags: (tags: Tags) => tags.filter((t) => typeof t === 'string' || !NON_JSON_TAGS.has(t.tag)),
    });
    for (const d of composer.compose(tokens, true, text.length)) {
      if (doc !== null) notYaml(lines.linePos(d.range[0]).line, null, `a second document; the ${what} must hold one`);
      doc = d;
    }
  } catch (e) {
    if (e instanceof Refused) throw e;
    return refuse(400, code, `${what} could not be parsed: ${e instanceof Error ? e.message : String(e)}`);
  }
  const parsed = doc as Document.Parsed;
  const err = parsed.errors[0];
  if (err !== undefined) {
    const pos = lines.linePos(err.pos[0]);
    notYaml(pos.line, pos.col, err.message.split('\n')[0] ?? '');
  }
  return parsed;
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
