/**
 * Decoded audio of one source waiting for the mixer: a ring of 16-bit samples. Bounded: when
 * a source runs ahead of the 20 ms clock (clock drift, a burst after jitter), the oldest
 * samples go, so latency stays under `capacity`.
 */
export class SampleFifo {
  private buf: Int16Array;
  private head = 0;
  private size = 0;
  dropped = 0;

  constructor(capacity: number) {
    this.buf = new Int16Array(capacity);
  }

  get length(): number {
    return this.size;
  }

  push(samples: Int16Array): void {
    const cap = this.buf.length;
    let src = samples;
    if (src.length > cap) {
      this.dropped += src.length - cap;
      src = src.subarray(src.length - cap);
    }
    const overflow = this.size + src.length - cap;
    if (overflow > 0) {
      this.head = (this.head + overflow) % cap;
      this.size -= overflow;
      this.dropped += overflow;
    }
    let tail = (this.head + this.size) % cap;
    for (let i = 0; i < src.length; i++) {
      this.buf[tail] = src[i]!;
      tail = tail + 1 === cap ? 0 : tail + 1;
    }
    this.size += src.length;
  }

  /** `n` samples into `out`, or false (and nothing taken) when fewer are waiting. */
  pull(n: number, out: Int16Array): boolean {
    if (this.size < n) return false;
    const cap = this.buf.length;
    for (let i = 0; i < n; i++) {
      out[i] = this.buf[this.head]!;
      this.head = this.head + 1 === cap ? 0 : this.head + 1;
    }
    this.size -= n;
    return true;
  }

  clear(): void {
    this.head = 0;
    this.size = 0;
  }
}
