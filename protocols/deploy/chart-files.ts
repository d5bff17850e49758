/**
 * From a checked chart archive to what the IaC commit holds, and back. At deploy, once the reader
 * (actors/deployer/chart-reader.ts, with keepContents) has accepted the tarball and before anything
 * is pushed: every entry gets its repository path under the iacPath (iac.ts placeChart),
 * Chart.yaml gets the deploy's chart version (chart-version.ts), and `values.yaml`, when the chart
 * has one, must parse (values.ts): a malformed values file is refused with 400 at deploy rather
 * than pushed for Flux or Helm to fail on later. For `POST /api/get/chart`, the archive's top
 * directory is the chart's name from Chart.yaml, as `helm package` names it, because Helm's loader
 * wants the chart under one directory. Pure.
 */
import { CHART_YAML, type ChartEntry } from './chart-rules.js';
import { chartName, setChartVersion } from './chart-version.js';
import { placeChart } from './iac.js';
import { parseValues, VALUES_FILE } from './values.js';

export interface ChartFileData extends ChartEntry {
  /** the file's bytes (the reader's keepContents); directories have none */
  data?: Uint8Array;
}

export interface PreparedChart {
  /** the name in Chart.yaml */
  name: string;
  /** directories to create, repository-relative, the iacPath first */
  dirs: string[];
  /** files to write, repository-relative; Chart.yaml already carries the new version */
  files: { repoPath: string; data: Uint8Array | string }[];
  /** the parsed values file, or null when the chart has none */
  values: Record<string, unknown> | null;
}

/** What to commit at `iacPath` for a checked chart, with Chart.yaml's version set to `semver`. */
export function prepareChart(chart: { topDir: string; entries: readonly ChartFileData[] }, iacPath: string, semver: string): PreparedChart {
  const chartYamlPath = `${chart.topDir}/${CHART_YAML}`;
  const valuesPath = `${chart.topDir}/${VALUES_FILE}`;
  const dirs: string[] = [iacPath];
  const files: PreparedChart['files'] = [];
  let name: string | null = null;
  let values: Record<string, unknown> | null = null;
  for (const e of placeChart(iacPath, chart.topDir, chart.entries)) {
    if (e.type === 'directory') {
      if (e.repoPath !== iacPath) dirs.push(e.repoPath);
      continue;
    }
    if (e.data === undefined) throw new TypeError(`file ${e.path} has no data: read the chart with keepContents`);
    let data: Uint8Array | string = e.data;
    if (e.path === chartYamlPath) {
      data = setChartVersion(e.data, semver);
      name = chartName(data);
    } else if (e.path === valuesPath) {
      values = parseValues(e.data);
    }
    files.push({ repoPath: e.repoPath, data });
  }
  if (name === null) throw new TypeError(`no ${chartYamlPath} among the entries: check the chart with ChartChecker first`);
  return { name, dirs, files, values };
}
