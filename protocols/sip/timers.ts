/**
 * The timer values of RFC 3261 Table 4 (§17, Appendix A) and RFC 6026 (Timers L and M), as a
 * pure function of T1/T2/T4 and whether the transport is reliable.
 *
 * | timer | meaning                                  | unreliable (UDP)     | reliable (TCP) |
 * |-------|------------------------------------------|----------------------|----------------|
 * | A     | INVITE request retransmit                | T1, doubling         | not used       |
 * | B     | INVITE client transaction timeout        | 64·T1                | 64·T1          |
 * | D     | wait for response retransmits (ICT)      | max(32 s, 64·T1)     | 0              |
 * | E     | non-INVITE request retransmit            | T1 doubling, cap T2  | not used       |
 * | F     | non-INVITE client transaction timeout    | 64·T1                | 64·T1          |
 * | G     | INVITE final response retransmit         | T1 doubling, cap T2  | not used       |
 * | H     | wait for ACK                             | 64·T1                | 64·T1          |
 * | I     | wait for ACK retransmits                 | T4                   | 0              |
 * | J     | wait for non-INVITE request retransmits  | 64·T1                | 0              |
 * | K     | wait for response retransmits (NICT)     | T4                   | 0              |
 * | L     | wait for INVITE retransmits after 2xx    | 64·T1                | 64·T1          |
 * | M     | wait for 2xx retransmits (ICT Accepted)  | 64·T1                | 64·T1          |
 */

export type TimerName = 'A' | 'B' | 'D' | 'E' | 'F' | 'G' | 'H' | 'I' | 'J' | 'K' | 'L' | 'M';

export interface TimerConfig {
  /** RTT estimate, default 500 ms. */
  t1: number;
  /** Maximum retransmit interval for non-INVITE requests and INVITE responses, default 4 s. */
  t2: number;
  /** Maximum duration a message remains in the network, default 5 s. */
  t4: number;
}

export const DEFAULT_TIMERS: TimerConfig = { t1: 500, t2: 4000, t4: 5000 };

/** The initial duration of a timer in ms (A, E and G are the first interval). */
export function timerDuration(name: TimerName, reliable: boolean, c: TimerConfig = DEFAULT_TIMERS): number {
  switch (name) {
    case 'A':
    case 'E':
    case 'G':
      return c.t1;
    case 'B':
    case 'F':
    case 'H':
    case 'L':
    case 'M':
      return 64 * c.t1;
    case 'D':
      return reliable ? 0 : Math.max(32000, 64 * c.t1);
    case 'I':
    case 'K':
      return reliable ? 0 : c.t4;
    case 'J':
      return reliable ? 0 : 64 * c.t1;
  }
}
