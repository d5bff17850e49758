/**
 * A min-heap of timer deadlines for the transaction table: the earliest deadline and the due
 * timers in O(log n) each, instead of a scan of every live transaction on every wake-up (with
 * thousands of transactions waiting out Timers I, J and K after their calls, that scan cost more
 * than the calls). Entries are never removed early: an entry is stale when its transaction no
 * longer has that timer at that deadline, and stale entries are dropped as they surface.
 */
import type { TimerName } from './timers.js';

export interface Deadline {
  at: number;
  key: string;
  timer: TimerName;
}

export class DeadlineHeap {
  private readonly items: Deadline[] = [];

  get length(): number {
    return this.items.length;
  }

  push(d: Deadline): void {
    const a = this.items;
    a.push(d);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]!.at <= d.at) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = d;
  }

  peek(): Deadline | undefined {
    return this.items[0];
  }

  pop(): Deadline | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length && last) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const r = l + 1;
        const c = r < a.length && a[r]!.at < a[l]!.at ? r : l;
        if (a[c]!.at >= last.at) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}
