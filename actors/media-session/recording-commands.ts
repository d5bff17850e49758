/**
 * A session's recording commands: `recording.start` (the endpoint checked before and after the
 * file is created, which takes a while) and `recording.stop`, and the taps: which RTP endpoints
 * each recording hears. The files and their stops are recording.ts's (`Recordings`); split
 * from session.ts, which keeps the endpoints; what this needs of the session is a narrow
 * `SessionHost`.
 */
import { refusal, type SessionCommand, type SessionOutcome } from './messages.js';
import type { Recordings } from './recording.js';
import type { RtpEndpoint } from './rtp-endpoint.js';
import type { SessionHost } from './session.js';

type RecordingStart = Extract<SessionCommand, { method: 'recording.start' }>;
type RecordingStop = Extract<SessionCommand, { method: 'recording.stop' }>;

export class RecordingCommands {
  constructor(
    private readonly s: Pick<SessionHost, 'args' | 'endpoints' | 'closed' | 'noEndpoint'>,
    private readonly recordings: Recordings,
    /** Take a source's packets back from the native path (fast-rules.ts). */
    private readonly takeFastSource: (ep: RtpEndpoint) => void,
  ) {}

  async start(c: RecordingStart): Promise<SessionOutcome<'recording.start'>> {
    const s = this.s;
    const { endpoint_id, file_name } = c.params;
    const check = () => {
      if (endpoint_id === null) return null;
      const ep = s.endpoints.get(endpoint_id);
      if (!ep) return s.noEndpoint(endpoint_id);
      if (ep.type !== 'rtp') return refusal('ENDPOINT_ERROR', `endpoint ${endpoint_id} is a ${ep.type} endpoint: only what RTP endpoints receive is recorded in this version`);
      return null;
    };
    const refused = check();
    if (refused) return refused;
    const started = await this.recordings.start(endpoint_id, file_name);
    if (!started.ok) return refusal(started.code, started.message);
    const r = started.recording;
    // The file was created asynchronously: the session may have closed or the endpoint gone meanwhile.
    const gone = s.closed() ? refusal('SESSION_NOT_FOUND', `session ${s.args.sessionId} closed while the recording file was being created`) : check();
    if (gone) {
      await this.recordings.stop(r.id);
      return gone;
    }
    this.retap();
    return { ok: true, result: { recording_id: r.id, endpoint_id, file_path: r.filePath, started_at_epoch_ms: r.startedAt } };
  }

  async stop(c: RecordingStop): Promise<SessionOutcome<'recording.stop'>> {
    const done = await this.recordings.stop(c.params.recording_id);
    if (!done) return refusal('ENDPOINT_ERROR', `no recording ${c.params.recording_id} in this session (never started, already stopped, or stopped by itself: see recording.stopped)`);
    this.retap();
    return { ok: true, result: done };
  }

  /**
   * Give every RTP endpoint the tap of the recordings that hear it (null: none). A tapped source
   * leaves the native path: a rule may have been set again while the recording's file was being
   * created, and its packets would bypass the tap.
   */
  retap(): void {
    for (const ep of this.s.endpoints.values()) {
      if (ep.type !== 'rtp') continue;
      ep.tap = this.recordings.tapFor(ep);
      if (ep.tap && ep.fastSource) this.takeFastSource(ep);
    }
  }
}
