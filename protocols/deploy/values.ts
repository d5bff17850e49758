/**
 * The values file of an environment's chart (`values.yaml` directly in the chart directory at the
 * iacPath), turned into the JSON object that `POST /api/get/values` answers with.
 *
 * Decisions: an empty file, one holding only comments, or one whose document is `null`/`~` gives
 * `{}` (Helm reads those as no values); a document that is a list or a scalar is refused with 400
 * (Helm itself refuses such a values file, so answering `{}` would hide a broken chart); several
 * documents in one file are refused; malformed YAML is refused naming the line and column; more
 * than 100 alias expansions or more than 1 MiB are refused. Pure.
 */
import { refuse } from './errors.js';
import { kindOf, parseYaml, toPlain, utf8Text, VALUES_LIMITS, type YamlLimits } from './yaml-text.js';

/** The file the values endpoint reads, relative to the chart directory. */
export const VALUES_FILE = 'values.yaml';

export function parseValues(bytes: Uint8Array | string, limits: YamlLimits = VALUES_LIMITS): Record<string, unknown> {
  const what = 'values file';
  const text = utf8Text(bytes, what, limits, 'BAD_YAML');
  const doc = parseYaml(text, what, 'BAD_YAML');
  const value = toPlain(doc, what, limits, 'BAD_YAML');
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    return refuse(400, 'BAD_YAML', `values file must be a mapping at the top level; got ${kindOf(value)}`);
  }
  return value as Record<string, unknown>;
}
