/**
 * A tone endpoint: a send-only source of ringback, ringing, busy, beep, sine or silence. The
 * spec's tone is PCMU at 8 kHz on a 20 ms clock; we synthesise it at each receiver's codec
 * rate instead (8 kHz for PCMU/PCMA, 16 kHz for G.722, 48 kHz for Opus), so a component the
 * receiver's codec cannot carry is dropped rather than aliased (see ToneGenerator).
 */
import { ToneGenerator } from '../../protocols/media/codecs/tone.js';
import type { ToneName } from '../../protocols/media/commands.js';
import type { Direction } from '../../protocols/media/types.js';
import type { EndpointInfo } from '../../protocols/media/results.js';
import type { EndpointCloseReason } from './rtp-endpoint.js';

export type ToneState = 'playing' | 'finished';

export class ToneEndpoint {
  readonly type = 'tone' as const;
  state: ToneState = 'playing';
  override: Direction | null = null;
  /** 20 ms frames produced so far (the tone's own clock; duration counts in frames). */
  frames = 0;
  private generators = new Map<number, ToneGenerator>();
  private closedBy: EndpointCloseReason | null = null;

  constructor(
    readonly id: string,
    readonly tone: ToneName,
    readonly frequency: number | undefined,
    readonly durationMs: number | null,
    readonly startedAt: number,
  ) {}

  get direction(): Direction {
    if (this.state === 'finished') return 'inactive';
    return this.override ?? 'sendonly';
  }

  /** One 20 ms frame at `rate` for this tick. */
  frame(rate: number): Int16Array {
    if (this.closedBy) throw new Error(`tone endpoint ${this.id} is closed (${this.closedBy}): it plays no more`);
    let g = this.generators.get(rate);
    if (!g) {
      g = new ToneGenerator(this.tone, { sampleRate: rate, frequency: this.frequency });
      // A receiver that joins late hears the cadence where it is, not from its start.
      if (this.frames > 0) g.advance((rate / 50) * this.frames);
      this.generators.set(rate, g);
    }
    return g.next(rate / 50);
  }

  /** Advance the tone's clock by one frame; true when a duration-limited tone has just ended. */
  advance(): boolean {
    if (this.state !== 'playing') return false;
    this.frames++;
    if (this.durationMs !== null && this.frames * 20 >= this.durationMs) {
      this.state = 'finished';
      return true;
    }
    return false;
  }

  get closed(): boolean {
    return this.closedBy !== null;
  }

  /** Close the endpoint, once: its generators go; a later frame() is refused. */
  close(reason: EndpointCloseReason = 'removed'): void {
    if (this.closedBy) return;
    this.closedBy = reason;
    this.generators.clear();
  }

  info(): EndpointInfo {
    return {
      endpoint_id: this.id,
      type: 'tone',
      state: this.state,
      direction: this.direction,
      direction_mode: this.override ? 'manual' : 'auto',
      tone: this.tone,
      frequency: this.frequency ?? null,
      duration_ms: this.durationMs,
      played_ms: this.frames * 20,
    };
  }
}
