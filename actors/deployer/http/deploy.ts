/**
 * `POST /api/deploy`: the multipart form (busboy) streamed to a file under the state directory
 * with the upload cap (413 above it), then, in order: the fields (api.ts checkDeployForm, 400),
 * the job token (401), the environment (selection.ts, 400/404), the chart read and checked whole
 * (chart-reader.ts) and prepared (chart-files.ts: version, values), 400 — nothing is pushed for a
 * refused request — then the deployment queued with its targets pinned (409 when a cluster is
 * gone), its chart kept at `<stateDir>/deployer/charts/<id>.tgz` with its SHA-256, and answered
 * 202 `{deploymentId}` while the runner pushes.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { readFile, rename, rm } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { join } from 'node:path';
import busboy from 'busboy';
import { checkDeployForm, type FormPart } from '../../../protocols/deploy/api.js';
import { attempt, Refused, unwrap } from '../../../protocols/deploy/errors.js';
import { prepareChart } from '../../../protocols/deploy/chart-files.js';
import { selectEnvironment } from '../../../protocols/deploy/selection.js';
import { iacPath } from '../../../protocols/deploy/iac.js';
import { queueDeployment } from '../../../protocols/deploy/status.js';
import { verifyJob } from '../job-auth.js';
import { routeFor } from '../../../runtime/http/router.js';
import { readChart } from '../chart-reader.js';
import type { DeploymentRecord } from '../store.js';
import type { Call } from './call.js';
import { sendJson } from './respond.js';

const route = routeFor<Call, Promise<void> | void>();

/** Room for the text fields and multipart framing above the chart's own cap. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

export const chartsDir = (stateDir: string) => join(stateDir, 'deployer', 'charts');

const tooLarge = (cap: number) => new Refused({ status: 413, code: 'BODY_TOO_LARGE', message: `the chart upload is over ${cap} bytes` });

/** Read the form: its parts, the chart part written to `file`. Registers onData at once (uWS needs it before the handler returns). */
function receiveForm(call: Call, file: string): Promise<FormPart[]> {
  const cap = call.svc.args.maxUploadBytes;
  return new Promise((resolve, reject) => {
    const parts: FormPart[] = [];
    let failed = false;
    let out: { from: NodeJS.ReadableStream; to: WriteStream } | null = null;
    /** Stop writing the chart file (the caller removes it); its descriptor goes now. */
    const dropFile = () => {
      if (out === null) return;
      out.from.unpipe(out.to);
      out.from.resume();
      out.to.destroy();
      out = null;
    };
    const fail = (e: Refused) => {
      if (failed) return;
      failed = true;
      dropFile();
      reject(e);
    };
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: { 'content-type': call.contentType }, limits: { fileSize: cap, files: 4, fields: 16, fieldSize: 8192, parts: 24 } });
    } catch (e) {
      call.r.res.onData(() => undefined);
      return fail(new Refused({ status: 400, code: 'INVALID_FIELD', message: `the body must be multipart/form-data (${(e as Error).message})` }));
    }
    let chartWritten: Promise<void> = Promise.resolve();
    let total = 0;
    // Over the cap, the rest of the body is read and dropped (up to twice the cap) before the 413,
    // so that the client, still sending, reads the answer instead of a reset connection.
    let overflow = false;
    const overflowed = () => {
      overflow = true;
      dropFile();
    };
    call.r.res.onData((chunk, isLast) => {
      if (failed) return;
      total += chunk.byteLength;
      if (!overflow && total > cap + FORM_OVERHEAD_BYTES) overflowed();
      if (overflow) {
        if (isLast || total > 2 * cap + FORM_OVERHEAD_BYTES) fail(tooLarge(cap));
        return;
      }
      bb.write(Buffer.from(chunk.slice(0)));
      if (isLast) bb.end();
    });
    call.r.onAbort(() => fail(new Refused({ status: 400, code: 'INVALID_FIELD', message: 'the client went away' })));
    bb.on('file', (name, stream, info) => {
      parts.push({ name, kind: 'file', filename: info.filename ?? null });
      if (name !== 'chart' || parts.filter((p) => p.name === 'chart').length > 1) return void stream.resume();
      const file$ = createWriteStream(file);
      out = { from: stream, to: file$ };
      stream.on('limit', () => {
        overflowed();
        stream.resume();
      });
      stream.pipe(file$);
      chartWritten = finished(file$);
      chartWritten.catch(() => undefined); // a dropped file's end is not an error; 'close' reads the outcome
    });
    bb.on('field', (name, value, info) => {
      if (info.valueTruncated) return fail(new Refused({ status: 400, code: 'INVALID_FIELD', message: `${name} is longer than 8192 bytes` }));
      parts.push({ name, kind: 'field', value });
    });
    for (const limit of ['partsLimit', 'filesLimit', 'fieldsLimit'] as const) bb.on(limit, () => fail(new Refused({ status: 400, code: 'INVALID_FIELD', message: 'the form has too many parts' })));
    bb.on('error', (e) => fail(new Refused({ status: 400, code: 'INVALID_FIELD', message: `the multipart body is malformed: ${(e as Error).message}` })));
    bb.on('close', () => {
      if (overflow) return fail(tooLarge(cap));
      chartWritten.then(
        () => !failed && resolve(parts),
        () => fail(new Refused({ status: 400, code: 'INVALID_FIELD', message: 'the chart upload could not be stored' })),
      );
    });
  });
}

export const deployRoutes = [
  route('POST', '/api/deploy', async (call) => {
    const { svc } = call;
    const id = randomUUID();
    const charts = chartsDir(svc.args.stateDir);
    mkdirSync(charts, { recursive: true });
    const upload = join(charts, `${id}.upload`);
    const received = receiveForm(call, upload);
    try {
      const parts = await received;
      const form = unwrap(checkDeployForm(parts));
      const claims = await verifyJob(svc.jobKey, svc.args.gitlabUrl, form);
      const { app, environment } = unwrap(selectEnvironment(svc.store.listApps(), [...svc.store.environments.getRange()].map((e) => e.value), { repoKey: form.repoKey, ref: claims.ref, environment: form.environment }));
      // a stored path is checked again: one from an older store must never reach the file system
      const path = iacPath(environment.iacPath, 'iacPath', 'IAC_PATH_OUTSIDE');
      const bytes = await readFile(upload);
      const chart = await readChart(bytes, { keepContents: true });
      if (!chart.ok) throw new Refused(chart.error);
      unwrap(attempt(() => prepareChart(chart.value, path, form.chartVersion)));
      const queued = unwrap(queueDeployment(id, environment.targets, svc.store.listClusters(), svc.args.defaultMonitorTimeoutSecs));
      const chartFile = join(charts, `${id}.tgz`);
      await rename(upload, chartFile);
      const now = Date.now();
      const rec: DeploymentRecord = {
        ...queued.deployment,
        appId: app.id,
        appName: app.name,
        environmentId: environment.id,
        environmentName: environment.name,
        iacRepoId: environment.iacRepoId,
        iacPath: path,
        version: form.version,
        chartVersion: form.chartVersion,
        jobId: form.jobId,
        ref: claims.ref,
        sha: claims.sha,
        chartFile,
        chartDigest: createHash('sha256').update(bytes).digest('hex'),
        commit: null,
        createdAt: now,
        updatedAt: now,
        lastSeq: 0,
      };
      await svc.runner.queue(rec, queued.events);
      sendJson(call.r, 202, { deploymentId: id });
    } catch (err) {
      await rm(upload, { force: true });
      throw err;
    }
  }),
];
