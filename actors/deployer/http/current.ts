/**
 * `POST /api/get/chart` and `POST /api/get/values`: what is deployed now, read from the IaC
 * repository's branch (fetched at the request, in the repository's queue) at the environment's
 * iacPath. Order of refusals, as for deploy: the body (400), the job token (401), the environment
 * (400/404), the stored iacPath checked again (400 IAC_PATH_OUTSIDE), then the files (404
 * CHART_NOT_FOUND without a Chart.yaml at the path, VALUES_NOT_FOUND without values.yaml; a
 * values file that does not parse 400 BAD_YAML). The chart comes back as application/gzip: a tar
 * of the directory under one top directory named after Chart.yaml's `name` (chart-files.ts), as
 * Helm's loader wants it.
 */
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';
import { routeFor } from '../../../runtime/http/router.js';
import { checkJobBody } from '../../../protocols/deploy/api.js';
import { CHART_YAML } from '../../../protocols/deploy/chart-rules.js';
import { chartName } from '../../../protocols/deploy/chart-version.js';
import { refuse, unwrap } from '../../../protocols/deploy/errors.js';
import { iacPath } from '../../../protocols/deploy/iac.js';
import { verifyJob } from '../job-auth.js';
import { selectEnvironment } from '../../../protocols/deploy/selection.js';
import { parseValues, VALUES_FILE } from '../../../protocols/deploy/values.js';
import { git, gitBytes } from '../git.js';
import type { Call } from './call.js';
import { readJson, send, sendJson } from './respond.js';

const route = routeFor<Call, Promise<void> | void>();

/** The environment a chart or values request is for, and its IaC repository. */
async function target(call: Call) {
  const { svc } = call;
  const req = unwrap(checkJobBody(await readJson(call.body)));
  const claims = await verifyJob(svc.jobKey, svc.args.gitlabUrl, req);
  const { environment } = unwrap(selectEnvironment(svc.store.listApps(), [...svc.store.environments.getRange()].map((e) => e.value), { repoKey: req.repoKey, ref: claims.ref, environment: req.environment }));
  const path = iacPath(environment.iacPath, 'iacPath', 'IAC_PATH_OUTSIDE');
  const repo = svc.store.iacRepos.get(environment.iacRepoId) ?? refuse(404, 'CHART_NOT_FOUND', `the IaC repository ${environment.iacRepoId} of environment ${JSON.stringify(environment.name)} no longer exists`);
  return { environment, path, repo };
}

/** The files under `path` at `tip`: repository path → blob id (regular files only). */
async function filesAt(dir: string, tip: string, path: string): Promise<Map<string, string>> {
  const out = await git(dir, ['ls-tree', '-r', '-z', '--full-tree', tip, '--', `${path}/`]);
  const files = new Map<string, string>();
  for (const rec of out.split('\0')) {
    const m = /^(\d+) blob ([0-9a-f]+)\t(.*)$/s.exec(rec);
    if (m && (m[1] === '100644' || m[1] === '100755')) files.set(m[3] as string, m[2] as string);
  }
  return files;
}

async function tarGz(files: { name: string; data: Buffer }[]): Promise<Buffer> {
  const pack = tar.pack();
  const gz = pack.pipe(createGzip());
  const chunks: Buffer[] = [];
  gz.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => {
    gz.on('end', resolve);
    gz.on('error', reject);
  });
  for (const f of files) pack.entry({ name: f.name, size: f.data.byteLength, mode: 0o644, mtime: new Date(0) }, f.data);
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

export const currentRoutes = [
  route('POST', '/api/get/chart', async (call) => {
    const { environment, path, repo } = await target(call);
    const archive = await call.svc.runner.pusher.read(repo, async (dir, tip) => {
      const files = tip === null ? new Map<string, string>() : await filesAt(dir, tip, path);
      const chartYaml = files.get(`${path}/${CHART_YAML}`);
      if (chartYaml === undefined) return refuse(404, 'CHART_NOT_FOUND', `no chart at ${path} in IaC repository ${repo.name} for environment ${JSON.stringify(environment.name)}`);
      const name = chartName(await gitBytes(dir, ['cat-file', 'blob', chartYaml]));
      const entries: { name: string; data: Buffer }[] = [];
      for (const [p, blob] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) entries.push({ name: `${name}/${p.slice(path.length + 1)}`, data: await gitBytes(dir, ['cat-file', 'blob', blob]) });
      return tarGz(entries);
    });
    send(call.r, 200, archive, [['Content-Disposition', 'attachment; filename="chart.tgz"']], 'application/gzip');
  }),
  route('POST', '/api/get/values', async (call) => {
    const { environment, path, repo } = await target(call);
    const bytes = await call.svc.runner.pusher.read(repo, async (dir, tip) => {
      const blob = tip === null ? undefined : (await filesAt(dir, tip, path)).get(`${path}/${VALUES_FILE}`);
      if (blob === undefined) return refuse(404, 'VALUES_NOT_FOUND', `no ${VALUES_FILE} at ${path} in IaC repository ${repo.name} for environment ${JSON.stringify(environment.name)}`);
      return gitBytes(dir, ['cat-file', 'blob', blob]);
    });
    sendJson(call.r, 200, parseValues(bytes));
  }),
];
