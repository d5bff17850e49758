/**
 * A file endpoint: a send-only source that plays a decoded local file (file-source.ts) on the
 * session's 20 ms clock, resampled to each receiver's codec rate and encoded by the mixer like
 * a tone. States playing → paused → playing → finished (spec); pause, resume and seek are
 * commands (`endpoint.file.pause|resume|seek`).
 *
 * Decisions:
 * - The play position is a cursor over the file's own samples (`pos`, and the loops left). The
 *   endpoint's clock advances it by exactly 20 ms of the file's rate per tick (220 or 221 samples
 *   alternately for 11025 Hz), so position_ms is exact whatever the rate.
 * - Each receiver rate has its reader: its own cursor, started from the play position, a
 *   streaming windowed-sinc resampler (protocols/media/codecs/resample.ts) and the few samples
 *   the resampler gave beyond the last frame. A receiver that joins late starts where the file
 *   is. Seek, and a resume after a seek, start every reader afresh from the new position.
 * - `start_ms` applies to the first pass; each loop replays the whole file. `loop_count` n plays
 *   the file 1 + n times; null loops until the endpoint is removed. At the end of the last pass
 *   the endpoint is `finished` (it stays in the session, inactive, until removed).
 * - Paused: the endpoint gives no audio (a receiver that hears nothing else gets no packets),
 *   and its position stays. Pause and resume are idempotent; on a finished file they are
 *   refused, as is seek. A seek to or past the end finishes the file at once.
 * - A URL source starts `buffering` (no file yet: it plays nothing) and turns `playing` when its
 *   download is decoded (`load`), from `start_ms`; a download that fails finishes it (`fail`).
 *   Pause, resume and seek are refused while it buffers (there is no position yet).
 */
import { Resampler } from '../../protocols/media/codecs/resample.js';
import type { FileState } from '../../protocols/media/results.js';
import type { Direction } from '../../protocols/media/types.js';
import type { EndpointInfo } from '../../protocols/media/results.js';
import type { EndpointCloseReason } from './rtp-endpoint.js';
import type { LoadedFile } from './file-source.js';

/** Where playback is: a sample of the file and the passes left after this one (null: forever). */
interface Cursor {
  pos: number;
  loopsLeft: number | null;
  ended: boolean;
}

/** One receiver rate's view of the file. */
interface Reader {
  cursor: Cursor;
  resampler: Resampler;
  /** Resampled samples not yet given out. */
  pending: Int16Array;
  pendingLength: number;
  chunk: Int16Array;
}

export class FileEndpoint {
  readonly type = 'file' as const;
  state: FileState = 'playing';
  override: Direction | null = null;
  /** 20 ms frames played (paused time not counted). */
  frames = 0;
  private readonly master: Cursor;
  /** Fraction of a sample carried between ticks (rates that are not a multiple of 50 Hz). */
  private carry = 0;
  private readers = new Map<number, Reader>();
  private closedBy: EndpointCloseReason | null = null;
  private pcm: Int16Array = new Int16Array(0);
  rate = 8000;
  /** Why a URL source's download failed (the endpoint is finished). */
  error: string | null = null;

  constructor(
    readonly id: string,
    readonly source: string,
    /** null: a URL source still downloading (`buffering` until load()). */
    file: LoadedFile | null,
    readonly startMs: number,
    readonly loopCount: number | null,
    readonly gainDb: number,
  ) {
    this.master = { pos: 0, loopsLeft: loopCount, ended: false };
    if (file) this.load(file);
    else this.state = 'buffering';
  }

  /** The file is here (at once for a local one, after the download for a URL): play from start_ms. */
  load(file: LoadedFile): void {
    this.pcm = file.pcm;
    this.rate = file.info.sampleRate;
    this.state = 'playing';
    this.seekTo(this.startMs);
  }

  /** The download or its decoding failed: the endpoint is finished and plays nothing. */
  fail(message: string): void {
    this.error = message;
    this.master.ended = true;
    this.state = 'finished';
  }

  get durationMs(): number {
    return Math.floor((this.pcm.length * 1000) / this.rate);
  }

  get positionMs(): number {
    return Math.floor((this.master.pos * 1000) / this.rate);
  }

  get direction(): Direction {
    if (this.state === 'finished') return 'inactive';
    return this.override ?? 'sendonly';
  }

  /** Move the play position (the loops left stay); true when that is the end of the file. */
  seekTo(ms: number): boolean {
    const pos = Math.round((ms * this.rate) / 1000);
    this.readers.clear();
    this.carry = 0;
    if (pos >= this.pcm.length) {
      this.master.pos = this.pcm.length;
      this.master.ended = true;
      this.state = 'finished';
      return true;
    }
    this.master.pos = pos;
    this.master.ended = false;
    return false;
  }

  /** One 20 ms frame at `rate`, or null while paused or finished. */
  frame(rate: number): Int16Array | null {
    if (this.closedBy) throw new Error(`file endpoint ${this.id} is closed (${this.closedBy}): it plays no more`);
    if (this.state !== 'playing') return null;
    let r = this.readers.get(rate);
    if (!r) {
      const resampler = new Resampler(this.rate, rate);
      r = { cursor: { ...this.master }, resampler, pending: new Int16Array(rate / 25), pendingLength: 0, chunk: new Int16Array(0) };
      this.readers.set(rate, r);
    }
    const n = rate / 50;
    while (r.pendingLength < n) {
      const want = Math.max(1, Math.ceil(((n - r.pendingLength) * this.rate) / rate));
      if (r.chunk.length < want) r.chunk = new Int16Array(want);
      const input = r.chunk.subarray(0, want);
      this.read(r.cursor, input);
      const need = r.resampler.outputLength(want);
      if (r.pending.length < r.pendingLength + need) {
        const bigger = new Int16Array(r.pendingLength + need + n);
        bigger.set(r.pending.subarray(0, r.pendingLength));
        r.pending = bigger;
      }
      r.resampler.process(input, r.pending.subarray(r.pendingLength, r.pendingLength + need));
      r.pendingLength += need;
    }
    const out = r.pending.slice(0, n);
    r.pending.copyWithin(0, n, r.pendingLength);
    r.pendingLength -= n;
    return out;
  }

  /** Advance the endpoint's clock by one frame; true when the file has just finished. */
  advance(): boolean {
    if (this.state !== 'playing') return false;
    this.frames++;
    const exact = this.rate / 50 + this.carry;
    const n = Math.floor(exact);
    this.carry = exact - n;
    this.skip(this.master, n);
    if (this.master.ended) {
      this.state = 'finished';
      return true;
    }
    return false;
  }

  pause(): void {
    if (this.state === 'playing') this.state = 'paused';
  }

  resume(): void {
    if (this.state === 'paused') this.state = 'playing';
  }

  /** Copy the next samples of `c` into `out` (silence past the end) and move it on. */
  private read(c: Cursor, out: Int16Array): void {
    let o = 0;
    while (o < out.length) {
      if (c.ended) {
        out.fill(0, o);
        return;
      }
      const take = Math.min(out.length - o, this.pcm.length - c.pos);
      out.set(this.pcm.subarray(c.pos, c.pos + take), o);
      o += take;
      this.skip(c, take);
    }
  }

  /** Move `c` on by `n` samples, through the loops. */
  private skip(c: Cursor, n: number): void {
    c.pos += n;
    while (c.pos >= this.pcm.length && !c.ended) {
      if (c.loopsLeft === 0) {
        c.pos = this.pcm.length;
        c.ended = true;
        return;
      }
      if (c.loopsLeft !== null) c.loopsLeft--;
      c.pos -= this.pcm.length;
    }
  }

  get closed(): boolean {
    return this.closedBy !== null;
  }

  /** Close the endpoint, once: its samples and readers go; a later frame() is refused. */
  close(reason: EndpointCloseReason = 'removed'): void {
    if (this.closedBy) return;
    this.closedBy = reason;
    this.readers.clear();
  }

  info(): EndpointInfo {
    return {
      endpoint_id: this.id,
      type: 'file',
      state: this.state,
      direction: this.direction,
      direction_mode: this.override ? 'manual' : 'auto',
      source: this.source,
      sample_rate: this.rate,
      duration_ms: this.durationMs,
      position_ms: this.positionMs,
      loops_left: this.master.loopsLeft,
      gain_db: this.gainDb,
      played_ms: this.frames * 20,
      ...(this.error ? { error: this.error } : {}),
    };
  }
}
