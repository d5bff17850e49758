/**
 * The chart version a deploy writes into Chart.yaml. Helm requires `version` to be SemVer 2, and
 * Flux rebuilds a chart from git only when that version changes, so every deploy writes one:
 *
 * - a SemVer 2 version, with or without a leading `v` (`v1.2.3-rc.1+b5` → `1.2.3-rc.1+b5`);
 * - a commit id, 7 to 40 hex digits (or 64 for SHA-256 repositories) → `0.0.0-g<hex, lower case>`:
 *   a pre-release of 0.0.0, prefixed with `g` as git-describe does, because a pre-release
 *   identifier made only of digits must not begin with 0 and a commit id may;
 * - anything else (`v1.2`, `release-7`, `01.2.3`) is refused with 400 naming `version`.
 *
 * `setChartVersion` rewrites only the text of the `version:` value in Chart.yaml, so comments,
 * key order, quoting of other keys and line endings stay as they were; a Chart.yaml without a
 * version gets a `version:` line appended. The file must be one YAML mapping with `apiVersion`
 * v1 or v2 and a `name` of letters, digits, '.', '_', '-' (Helm refuses a chart without them; the
 * name also becomes the top directory of the tarball `POST /api/get/chart` answers). Pure.
 */
import { isMap, isScalar, type Pair, type Scalar, type YAMLMap } from 'yaml';
import { invalid, refuse } from './errors.js';
import { describe, textValue } from './fields.js';
import { parseYaml, utf8Text } from './yaml-text.js';

/** SemVer 2.0.0, from semver.org. */
export const SEMVER_RE =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
const COMMIT_RE = /^(?:[0-9a-fA-F]{7,40}|[0-9a-fA-F]{64})$/;
/** Longest deploy version accepted. */
export const MAX_VERSION_LENGTH = 128;

/** The SemVer 2 chart version for a deploy `version` (a tag or a commit id), or a 400 refusal naming `field`. */
export function chartVersion(version: unknown, field = 'version'): string {
  const v = textValue(version, field, { max: MAX_VERSION_LENGTH });
  const bare = v.startsWith('v') ? v.slice(1) : v;
  if (SEMVER_RE.test(bare)) return bare;
  if (COMMIT_RE.test(v)) return `0.0.0-g${v.toLowerCase()}`;
  return invalid(`${field} must be a SemVer tag (1.2.3 or v1.2.3) or a commit id (7 to 40 hex digits); got ${describe(v)}`);
}

/** Chart.yaml is larger than any real one at 1 MiB; aliases have no business in it. */
const CHART_YAML_LIMITS = { maxBytes: 1024 * 1024, maxAliasCount: 0 };

/** Chart names as Helm accepts them: no path separators, not '.' or '..'. */
const CHART_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

interface ChartYaml {
  text: string;
  map: YAMLMap;
  name: string;
  get(key: string): Pair | undefined;
}

/** Chart.yaml read and checked: one mapping with apiVersion v1 or v2 and a valid name; else 400 BAD_CHART. */
function readChartYaml(chartYaml: Uint8Array | string): ChartYaml {
  const what = 'Chart.yaml';
  const text = utf8Text(chartYaml, what, CHART_YAML_LIMITS, 'BAD_CHART');
  const doc = parseYaml(text, what, 'BAD_CHART');
  const map = doc.contents;
  if (!isMap(map)) return refuse(400, 'BAD_CHART', 'Chart.yaml must be a mapping');
  const get = (key: string): Pair | undefined => map.items.find((p) => isScalar(p.key) && (p.key as Scalar).value === key);
  const apiVersion = get('apiVersion')?.value;
  if (!isScalar(apiVersion) || (apiVersion.value !== 'v1' && apiVersion.value !== 'v2')) {
    refuse(400, 'BAD_CHART', 'Chart.yaml must have apiVersion v1 or v2');
  }
  const name = get('name')?.value;
  if (!isScalar(name) || typeof name.value !== 'string' || name.value === '') return refuse(400, 'BAD_CHART', 'Chart.yaml must have a name');
  if (!CHART_NAME_RE.test(name.value) || name.value.length > 250) {
    refuse(400, 'BAD_CHART', `Chart.yaml name must be letters, digits, '.', '_' or '-', beginning with a letter or digit; got ${describe(name.value)}`);
  }
  return { text, map, name: name.value, get };
}

/** The chart's name from Chart.yaml (checked as setChartVersion checks it). */
export function chartName(chartYaml: Uint8Array | string): string {
  return readChartYaml(chartYaml).name;
}

/** Chart.yaml's text with `version` set to `semver` (already checked by chartVersion); 400 BAD_CHART on a bad Chart.yaml. */
export function setChartVersion(chartYaml: Uint8Array | string, semver: string): string {
  if (!SEMVER_RE.test(semver)) throw new TypeError(`not a SemVer 2 version: ${JSON.stringify(semver)}`);
  const { text, map, get } = readChartYaml(chartYaml);
  const pair = get('version');
  let out: string;
  if (pair === undefined) {
    if (map.flow) return refuse(400, 'BAD_CHART', 'Chart.yaml has no version and is a flow mapping; add a version: line');
    out = `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}version: ${semver}\n`;
  } else {
    const value = pair.value;
    if (!isScalar(value) || value.range == null) return refuse(400, 'BAD_CHART', 'Chart.yaml version must be a plain value');
    const [start, end] = value.range;
    const gap = start === end && text[start - 1] === ':' ? ' ' : '';
    out = text.slice(0, start) + gap + semver + text.slice(end);
  }
  // belt and braces: the edit must read back as exactly this version
  const back = parseYaml(out, 'Chart.yaml', 'BAD_CHART').get('version');
  if (back !== semver) throw new Error(`Chart.yaml version rewrite read back ${JSON.stringify(back)}, expected ${semver}`);
  return out;
}
