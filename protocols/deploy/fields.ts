/**
 * Field readers for request bodies: each takes the body object, the key and the name to report
 * (`targets[2].clusterId`), and either returns the typed value or throws a 400 refusal whose
 * message starts with that name. A field counts as present only as an own property, so
 * `toString` or `__proto__` never come from Object.prototype. Unknown fields are refused, so a
 * misspelt optional field never passes silently. Pure.
 */
import { describe } from '../media/validate.js';
import { invalid, missing } from './errors.js';

export { describe };

export type Body = Record<string, unknown>;

/** C0 controls and DEL: never allowed in names, ids or anything that reaches a commit message. */
const CONTROL_RE = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE_RE = /\p{Cs}/u;

/** `v` as a plain JSON object; `name` is what the message calls it ('body', 'targets[0]'). */
export function objectAt(v: unknown, name: string): Body {
  if (v === undefined) missing(`${name} is required`);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) invalid(`${name} must be a JSON object; got ${describe(v)}`);
  return v as Body;
}

/** Refuse any own key of `o` not in `allowed`. */
export function onlyKnown(o: Body, allowed: readonly string[], name: string): void {
  for (const key of Object.keys(o)) {
    if (!allowed.includes(key)) invalid(`${name === 'body' ? '' : `${name}: `}unknown field ${JSON.stringify(key)} (allowed: ${allowed.join(', ')})`);
  }
}

export function own(o: Body, key: string): unknown {
  return Object.hasOwn(o, key) ? o[key] : undefined;
}

export function joinName(parent: string, key: string): string {
  return parent === 'body' ? key : `${parent}.${key}`;
}

export interface TextRule {
  /** longest accepted value, in characters */
  max: number;
  /** control characters are refused unless this is set (tokens never need them either) */
  allowControl?: boolean;
}

/** A non-empty string within `max` characters, without control characters or lone surrogates. */
export function textValue(v: unknown, name: string, rule: TextRule): string {
  if (v === undefined) missing(`${name} is required`);
  if (typeof v !== 'string') invalid(`${name} must be a string; got ${describe(v)}`);
  const s = v as string;
  if (s === '') invalid(`${name} must not be empty`);
  if (s.length > rule.max) invalid(`${name} is longer than ${rule.max} characters`);
  if (!rule.allowControl && CONTROL_RE.test(s)) invalid(`${name} must not contain control characters`);
  if (LONE_SURROGATE_RE.test(s)) invalid(`${name} is not valid Unicode text`);
  return s;
}

export function requiredText(o: Body, key: string, parent: string, rule: TextRule): string {
  return textValue(own(o, key), joinName(parent, key), rule);
}

/** A whole number in [min, max]: refuses strings, booleans, fractions, NaN and Infinity by name. */
export function wholeNumber(v: unknown, name: string, min: number, max: number): number {
  if (v === undefined) missing(`${name} is required`);
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    invalid(`${name} must be a whole number between ${min} and ${max}; got ${describe(v)}`);
  }
  return v as number;
}

/** Largest id the service hands out; ids are positive integers (the spec types clusterId as number). */
export const MAX_ID = 2 ** 31 - 1;

export function idField(o: Body, key: string, parent: string): number {
  return wholeNumber(own(o, key), joinName(parent, key), 1, MAX_ID);
}
