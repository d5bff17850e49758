/**
 * A session's recordings: recording.start / recording.stop, which endpoints each one hears,
 * and the stops nobody asked for (the endpoint transferred away or removed, the session
 * destroyed, the disk failing), each announced with `recording.stopped`.
 *
 * What is recorded: the media an RTP endpoint receives, as it arrives, after SRTP/SRTCP
 * decryption (RTP and RTCP), one pcap record per datagram, stamped with the same `Date.now()`
 * reading the endpoint took on arrival: the media-host epoch clock of `removed_at_epoch_ms`.
 * An endpoint is tapped through `RtpEndpoint.tap` (null when no recording hears it, so the
 * media path pays one null check); a tapped source is never handed to the native packet path,
 * whose packets would bypass JS.
 *
 * A recording of the whole session (`endpoint_id` null) hears every RTP endpoint in it,
 * including those added or transferred in later; one of an endpoint hears only it.
 *
 * Where it ends: a finished file is stored as an object when the session has a RecordingStore
 * (MEDIA_RECORDING_BUCKET with the object store in the daemon): the summary then says
 * `object_path` and `object_id` instead of `file_path`; a file the store refused stays local and
 * the summary adds `store_error`. A file ended by a disk error (`io_error`) is not stored.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pcapRecord } from '../../protocols/media/pcap.js';
import type { RecordingStopReason, RecordingSummary } from '../../protocols/media/results.js';
import { RecordingFile } from './recording-file.js';
import type { RecordingStore, StoredRecording } from './recording-store.js';
import type { RtpEndpoint } from './rtp-endpoint.js';
import { RECORDING_FILE_NAME } from '../../protocols/media/recording-name.js';

/** A session holds at most this many recordings at once (LIMIT_EXCEEDED beyond). */
export const MAX_RECORDINGS_PER_SESSION = 100;
/** MEDIA_RECORDING_QUEUE_PACKETS's default: records waiting for the disk, per recording. */
export const DEFAULT_RECORDING_QUEUE_PACKETS = 1000;
export type Tap = (packet: Uint8Array, address: string, port: number, rtcp: boolean, now: number) => void;

interface Recording {
  id: string;
  endpointId: string | null;
  filePath: string;
  startedAt: number;
  file: RecordingFile;
}

export interface RecordingsEnv {
  /** A recording ended without being asked: the session emits `recording.stopped`. */
  stopped(summary: RecordingSummary & { reason: RecordingStopReason; error?: string }): void;
}

export type StartOutcome = { ok: true; recording: Recording } | { ok: false; code: 'ENDPOINT_ERROR' | 'LIMIT_EXCEEDED' | 'INVALID_PARAMS'; message: string };

export class Recordings {
  private readonly all = new Map<string, Recording>();
  /** Stops in progress (their files being flushed and closed). */
  private readonly ending = new Set<Promise<void>>();

  constructor(
    private readonly dir: string | null,
    private readonly maxQueued: number,
    private readonly env: RecordingsEnv,
    private readonly store: RecordingStore | null = null,
  ) {}

  get size(): number {
    return this.all.size;
  }

  /** Open the file of a new recording of `endpointId` (null: the whole session). */
  async start(endpointId: string | null, fileName: string | undefined): Promise<StartOutcome> {
    if (!this.dir) return { ok: false, code: 'ENDPOINT_ERROR', message: 'recording is off: the bridge has no recordings directory (MEDIA_RECORDING_DIR is not set)' };
    if (this.all.size >= MAX_RECORDINGS_PER_SESSION) return { ok: false, code: 'LIMIT_EXCEEDED', message: `the session has ${this.all.size} recordings running; at most ${MAX_RECORDINGS_PER_SESSION}` };
    if (fileName !== undefined && !RECORDING_FILE_NAME.test(fileName)) {
      return { ok: false, code: 'INVALID_PARAMS', message: `file_name ${JSON.stringify(fileName.slice(0, 80))} is not a plain file name (letters, digits, '.', '_', '-'; no '/', no leading '.'; at most 200 characters)` };
    }
    const id = randomUUID();
    const filePath = join(this.dir, fileName ?? `${id}.pcap`);
    let file: RecordingFile;
    try {
      file = await RecordingFile.create(filePath, this.maxQueued, (error) => void this.end(id, 'io_error', error));
    } catch (err) {
      return { ok: false, code: 'ENDPOINT_ERROR', message: `cannot create recording file ${filePath}: ${(err as Error).message}` };
    }
    const r: Recording = { id, endpointId, filePath, startedAt: Date.now(), file };
    this.all.set(id, r);
    return { ok: true, recording: r };
  }

  /** recording.stop: flush and close; null when there is no such recording. */
  async stop(id: string): Promise<RecordingSummary | null> {
    const r = this.all.get(id);
    if (!r) return null;
    this.all.delete(id);
    const stoppedAt = Date.now();
    await r.file.finish();
    return summary(r, stoppedAt, await this.keep(r));
  }

  /** Stop every recording that hears `endpointId` alone (transferred out, removed). */
  endpointGone(endpointId: string, reason: 'transferred' | 'endpoint_removed'): void {
    for (const r of this.all.values()) if (r.endpointId === endpointId) void this.end(r.id, reason);
  }

  /** The session closes: every recording stops; resolves when every file (of earlier stops too) is closed. */
  async closeAll(): Promise<void> {
    for (const id of [...this.all.keys()]) void this.end(id, 'session_destroyed');
    await Promise.all([...this.ending]);
  }

  private end(id: string, reason: RecordingStopReason, error?: string): Promise<void> {
    const r = this.all.get(id);
    if (!r) return Promise.resolve();
    this.all.delete(id);
    const stoppedAt = Date.now();
    const done = r.file.finish().then(async () => {
      const where = reason === 'io_error' ? {} : await this.keep(r);
      this.ending.delete(done);
      this.env.stopped({ ...summary(r, stoppedAt, where), reason, ...(error ? { error } : {}) });
    });
    this.ending.add(done);
    return done;
  }

  /** A closed file into the object store, when there is one; what the summary says of it. */
  private async keep(r: Recording): Promise<Kept> {
    if (!this.store || r.file.failed) return {};
    try {
      return await this.store.put(r.filePath, r.file.bytes, r.file.md5());
    } catch (err) {
      return { store_error: (err as Error).message };
    }
  }

  /** The tap an RTP endpoint gets now: null when no recording hears it. */
  tapFor(ep: RtpEndpoint): Tap | null {
    const files: RecordingFile[] = [];
    for (const r of this.all.values()) if (r.endpointId === null || r.endpointId === ep.id) files.push(r.file);
    if (files.length === 0) return null;
    const local = ep.local;
    return (packet, address, port, rtcp, now) => {
      const record = pcapRecord(now, { srcAddress: address, srcPort: port, dstAddress: local.address, dstPort: rtcp ? local.rtcpPort : local.port }, packet);
      for (const f of files) f.write(record);
    };
  }

  info(): Array<{ recording_id: string; endpoint_id: string | null; file_path: string; started_at_epoch_ms: number; packets: number; dropped_packets: number }> {
    return [...this.all.values()].map((r) => ({ recording_id: r.id, endpoint_id: r.endpointId, file_path: r.filePath, started_at_epoch_ms: r.startedAt, packets: r.file.packets, dropped_packets: r.file.dropped }));
  }
}

type Kept = StoredRecording | { store_error?: string };

function summary(r: Recording, stoppedAt: number, kept: Kept): RecordingSummary {
  return {
    recording_id: r.id,
    endpoint_id: r.endpointId,
    ...('object_path' in kept ? kept : { file_path: r.filePath, ...kept }),
    packets: r.file.packets,
    dropped_packets: r.file.dropped,
    bytes: r.file.bytes,
    started_at_epoch_ms: r.startedAt,
    stopped_at_epoch_ms: stoppedAt,
    duration_ms: stoppedAt - r.startedAt,
  };
}
