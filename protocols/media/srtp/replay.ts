/**
 * Replay protection (RFC 3711 §3.3.2) and the SRTP packet-index estimate (§3.3.1, Appendix A).
 *
 * Decisions:
 * - The window is a circular bitmap of B bits (the window size rounded up to a power of two,
 *   at least 32), addressed by index mod B; moving ahead clears only the bits it passes over,
 *   so an in-order packet costs O(1) and nothing is allocated per packet.
 * - An index more than `size - 1` behind the highest one is 'too-old'; within the window a
 *   seen bit is 'replay'. The window is only moved by `accept`, which the caller calls after
 *   the packet authenticated.
 * - Snapshots use a position-independent form: bit k of the word list means "highest - k was
 *   received", so the data stays meaningful whatever the in-memory layout.
 * - Index estimate: the RFC's rule, except that with ROC 0 a guess of ROC - 1 (a packet that
 *   would come from before index 0) is taken as ROC 0 far ahead, as libsrtp does; the packet
 *   then has to authenticate with that index to change anything.
 */

export type ReplayVerdict = 'ok' | 'replay' | 'too-old';

export const MAX_REPLAY_WINDOW = 32768;

/** Throws a RangeError unless `size` is a usable window size (1..32768 packets). */
export function checkReplayWindowSize(size: number): void {
  if (!Number.isInteger(size) || size < 1 || size > MAX_REPLAY_WINDOW) throw new RangeError(`replay window must be an integer in 1..${MAX_REPLAY_WINDOW}`);
}

export class ReplayWindow {
  /** Highest index accepted so far. */
  highest: number;
  readonly size: number;
  private readonly bits: Uint32Array;
  private readonly mod: number;

  constructor(size: number, firstIndex: number) {
    checkReplayWindowSize(size);
    this.size = size;
    let mod = 32;
    while (mod < size) mod *= 2;
    this.mod = mod;
    this.bits = new Uint32Array(mod / 32);
    this.highest = firstIndex;
    this.set(firstIndex);
  }

  check(index: number): ReplayVerdict {
    if (index > this.highest) return 'ok';
    if (this.highest - index >= this.size) return 'too-old';
    const pos = index % this.mod;
    return ((this.bits[pos >>> 5] as number) >>> (pos & 31)) & 1 ? 'replay' : 'ok';
  }

  /** Marks `index` received (moving the window forward if it is the new highest). */
  accept(index: number): void {
    if (index > this.highest) {
      const delta = index - this.highest;
      if (delta >= this.mod) this.bits.fill(0);
      else for (let k = 1; k <= delta; k++) this.clear((this.highest + k) % this.mod);
      this.highest = index;
    }
    this.set(index);
  }

  /** Bit k of word k>>5 set: index `highest - k` was received (k < size). */
  toWords(): number[] {
    const words = new Array<number>(Math.ceil(this.size / 32)).fill(0);
    for (let k = 0; k < this.size && k <= this.highest; k++) {
      const pos = (this.highest - k) % this.mod;
      if (((this.bits[pos >>> 5] as number) >>> (pos & 31)) & 1) words[k >>> 5] = ((words[k >>> 5] as number) | (1 << (k & 31))) >>> 0;
    }
    return words;
  }

  static fromWords(size: number, highest: number, words: readonly number[]): ReplayWindow {
    const w = new ReplayWindow(size, highest);
    w.bits.fill(0);
    for (let k = 0; k < size && k <= highest; k++) {
      if ((((words[k >>> 5] ?? 0) >>> (k & 31)) & 1) !== 0) w.set(highest - k);
    }
    return w;
  }

  private set(index: number): void {
    const pos = index % this.mod;
    this.bits[pos >>> 5] = (this.bits[pos >>> 5] as number) | (1 << (pos & 31));
  }

  private clear(pos: number): void {
    this.bits[pos >>> 5] = (this.bits[pos >>> 5] as number) & ~(1 << (pos & 31));
  }
}

/**
 * The ROC to use for sequence number `seq` given the highest index so far as (roc, highestSeq)
 * (RFC 3711 §3.3.1). Returned modulo 2^32 except for the ROC-0 case above.
 */
export function estimateRoc(roc: number, highestSeq: number, seq: number): number {
  if (highestSeq < 32768) {
    if (seq - highestSeq > 32768) return roc === 0 ? 0 : roc - 1;
    return roc;
  }
  if (highestSeq - 32768 > seq) return (roc + 1) >>> 0;
  return roc;
}
