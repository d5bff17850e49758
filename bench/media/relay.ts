/**
 * What the load generator needs from a relay under test: set up one two-leg call given the
 * generator's two UDP ports (and leg A's SRTP send key), tell where each leg must send, and
 * tear everything down after a run with the relay's own count of packets it received. The
 * relay runs in its own process, `pid`, whose CPU the benchmark reads from /proc.
 */
export interface CallLegs {
  /** Relay port that leg A sends to (media for B) and that leg B sends to (media for A). */
  toA: number;
  toB: number;
  /** The relay's SRTP send key for leg A (30 bytes), when leg A is SRTP. */
  rxKeyA: Buffer | null;
}

export interface RelayRun {
  /** Call `i`: the generator's leg A listens on `portA`, leg B on `portB`; `keyA` is A's SRTP master key (null: plain). */
  setup(i: number, portA: number, portB: number, keyA: Buffer | null): Promise<CallLegs>;
  /** Tear down every call; the relay's count of RTP packets it received (null when it has none). */
  finish(): Promise<{ relayRxPkts: number | null }>;
}

export interface Relay {
  /** Row label: 'rtpengine', 'hostd' or 'hostd/1t'. */
  readonly name: string;
  readonly pid: number;
  /** Whether it can take SRTP on leg A. */
  readonly srtp: boolean;
  /** Version and threads, for the report. */
  describe(): string;
  begin(calls: number, tag: string, concurrency: number): Promise<RelayRun>;
  stop(): Promise<void>;
}

/** A pool of `n` items handed out one at a time (commands on one bridge connection are sequential). */
export class Pool<T> {
  private waiting: Array<(t: T) => void> = [];
  constructor(private readonly free: T[]) {}

  async use<R>(fn: (t: T) => Promise<R>): Promise<R> {
    const t = this.free.pop() ?? (await new Promise<T>((r) => this.waiting.push(r)));
    try {
      return await fn(t);
    } finally {
      const w = this.waiting.shift();
      if (w) w(t);
      else this.free.push(t);
    }
  }
}
