/**
 * A session's file endpoints (file-endpoint.ts): `endpoint.create_file` (its source opened first,
 * file-open.ts), `endpoint.file.pause` / `resume` / `seek`, and their state changes as events
 * (a command, a download that finished, or the media clock reaching the end). Split from
 * session.ts, which keeps the endpoints, routing and the clock; what this needs of the session
 * is a narrow `SessionHost`.
 */
import { randomUUID } from 'node:crypto';
import { FileEndpoint } from './file-endpoint.js';
import { openFileSource } from './file-open.js';
import { refusal, type SessionCommand, type SessionOutcome } from './messages.js';
import { filesFinished } from './metrics.js';
import type { SessionHost } from './session.js';

type CreateFile = Extract<SessionCommand, { method: 'endpoint.create_file' }>;
type FileControl = Extract<SessionCommand, { method: 'endpoint.file.pause' | 'endpoint.file.resume' | 'endpoint.file.seek' }>;

export class FileCommands {
  constructor(private readonly s: Pick<SessionHost, 'args' | 'env' | 'endpoints' | 'closed' | 'add' | 'replan' | 'full' | 'noEndpoint'>) {}

  /**
   * A file endpoint: its source opened first (file-open.ts: a refusal creates nothing). A local
   * file plays at once; a URL's endpoint is `buffering` until its download is decoded, then
   * `playing`, or `finished` with `endpoint.file.finished {reason: "error"}` when it fails.
   */
  async create(c: CreateFile): Promise<SessionOutcome<'endpoint.create_file'>> {
    const s = this.s;
    const { start_ms, loop_count, gain_db } = c.params;
    if (s.endpoints.size >= s.args.maxEndpoints) return s.full();
    const opened = await openFileSource(s.args, c.params);
    if (!opened.ok) return opened;
    // Opened asynchronously: the session may have closed or filled up meanwhile.
    if (s.closed()) return refusal('SESSION_NOT_FOUND', `session ${s.args.sessionId} closed while the file was being opened`);
    if (s.endpoints.size >= s.args.maxEndpoints) return s.full();
    const ep = new FileEndpoint(randomUUID(), opened.shown, 'file' in opened ? opened.file : null, start_ms, loop_count, gain_db);
    s.add(ep);
    if ('download' in opened) {
      // A cached file is there at once: its state change waits a turn, so it follows this answer.
      void Promise.all([opened.download, new Promise((r) => setImmediate(r))]).then(([got]) => {
        if (ep.closed || s.closed()) return;
        if (got.ok) ep.load(got.file);
        else ep.fail(got.message);
        this.stateChanged(ep, 'buffering', ep.state === 'finished');
      });
    }
    return { ok: true, result: { endpoint_id: ep.id, state: ep.state, duration_ms: ep.state === 'buffering' ? 0 : ep.durationMs } };
  }

  /** `endpoint.file.pause`, `resume` and `seek`: refused on a finished or still buffering file. */
  control(c: FileControl): SessionOutcome<FileControl['method']> {
    const ep = this.s.endpoints.get(c.params.endpoint_id);
    if (!ep) return this.s.noEndpoint(c.params.endpoint_id);
    if (ep.type !== 'file') return refusal('ENDPOINT_ERROR', `endpoint ${ep.id} is a ${ep.type} endpoint, not a file endpoint`);
    const verb = c.method.slice('endpoint.file.'.length);
    if (ep.state === 'finished') return refusal('ENDPOINT_ERROR', `file endpoint ${ep.id} has finished: it cannot ${verb} (remove it, or create a new one)`);
    if (ep.state === 'buffering') return refusal('ENDPOINT_ERROR', `file endpoint ${ep.id} is still buffering (its download has not finished): it cannot ${verb} yet`);
    const before = ep.state;
    let ended = false;
    if (c.method === 'endpoint.file.pause') ep.pause();
    else if (c.method === 'endpoint.file.resume') ep.resume();
    else ended = ep.seekTo(c.params.position_ms);
    if (ep.state !== before) this.stateChanged(ep, before, ended);
    if (c.method === 'endpoint.file.seek') return { ok: true, result: { state: ep.state, position_ms: ep.positionMs } };
    return { ok: true, result: { state: ep.state } };
  }

  /** A file endpoint changed state (a command, its download, or its clock reached the end). */
  stateChanged(ep: FileEndpoint, previous: string, ended: boolean): void {
    this.s.env.emit('endpoint.state_changed', { endpoint_id: ep.id, type: 'file', state: ep.state, previous_state: previous });
    if (ended) {
      filesFinished.inc();
      this.s.env.emit('endpoint.file.finished', { endpoint_id: ep.id, reason: ep.error ? 'error' : 'completed', played_ms: ep.frames * 20, ...(ep.error ? { error: ep.error } : {}) });
    }
    this.s.replan();
  }
}
