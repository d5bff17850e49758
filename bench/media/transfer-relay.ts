/**
 * The media bridge as a relay under test with one of three placements of a call's two legs,
 * for the transfer benchmark (transfer.bench.ts). Leg A is the peer x of endpoint X, leg B the
 * peer z of endpoint Z; the generator (load.ts `runOnce`) streams both ways, x → X … Z → z and
 * z → Z … X → x, so every packet crosses whatever the placement puts between X and Z:
 *  - `baseline`: X and Z in one session S1 (no transfer);
 *  - `same-thread` (case a): S2 made with `colocate_with: S1`, X transferred S1 → S2: its
 *    sockets are handed over in memory; checked: S2's `thread_id` = S1's, X `relayed: false`;
 *  - `relayed` (case c): S2 on the other thread of the media group (checked with `thread_id`;
 *    while a new session lands on S1's thread another is made, on a connection of its own, and
 *    the misplaced ones are destroyed once one fits), X transferred S1 → S2: X's sockets stay
 *    on S1's thread, which relays each datagram to S2 and each of X's outgoing packets back;
 *    checked: X `relayed: true` in S2, S1 `relays_held: 1`;
 *  - `bridged` / `bridged-threads`: X in S1, Z in S2 (on S1's thread / on the other thread,
 *    placed as for the two cases above), S1 and S2 wired by `endpoint.create_bridge`: every
 *    packet is decoded, mixed as 48 kHz PCM, crosses to the other session as a runtime message
 *    (one per 20 ms frame), is resampled and encoded again; checked: both sides `connected`.
 * The group puts a new session on its least-loaded thread; calls are set up concurrently, so
 * each call's sessions are created while no other call's are (S1 then S2 land on different
 * threads at once unless earlier sessions left the group unbalanced). The setup of media,
 * transfer and checks runs concurrently.
 * One WebSocket connection per session (a connection binds one session), opened at setup and
 * closed at the end of the run. The transfer happens during setup, before any media flows, so
 * the few milliseconds of a handover cost no packet of the measured stream. At the end every
 * call's packetsIn (in the session that holds both endpoints) is summed and its sessions are
 * destroyed, S2 first (in case c that closes X's sockets on the home thread), then S1.
 */
import { MediaBridgeClient } from '../../actors/media-bridge/client.js';
import type { SessionInfo } from '../../protocols/media/results.js';
import { HOST, legSdp, parseRelaySdp } from './sdp.js';
import type { CallLegs, Relay, RelayRun } from './relay.js';

export const PLACEMENTS = ['baseline', 'same-thread', 'relayed', 'bridged', 'bridged-threads'] as const;
export type Placement = (typeof PLACEMENTS)[number];
/** What runs without --placements: the transfer cases (the bridge cases are asked for by name). */
export const DEFAULT_PLACEMENTS: readonly Placement[] = ['baseline', 'same-thread', 'relayed'];
/** Placements whose S2 must share S1's thread, and those whose S2 must not. */
const SAME_THREAD: ReadonlySet<Placement> = new Set(['same-thread', 'bridged']);
const OTHER_THREAD: ReadonlySet<Placement> = new Set(['relayed', 'bridged-threads']);

/** What each placement is, for the report. */
export const PLACEMENT_NOTE: Record<Placement, string> = {
  baseline: 'no transfer: X and Z in one session',
  'same-thread': '(a) X moved to a session on its thread (colocate_with): sockets handed over',
  relayed: '(c) X moved to a session on the other thread: its home relays every packet',
  bridged: 'X in S1, Z in S2 on its thread, S1 and S2 bridged (48 kHz PCM between them)',
  'bridged-threads': 'X in S1, Z in S2 on the other thread, S1 and S2 bridged across threads',
};

/** New sessions made in a row, at most, to find one on the other thread (case c). */
const MAX_PLACEMENT_TRIES = 40;

interface CallState {
  conns: MediaBridgeClient[];
  /** Sessions to read and destroy at the end: [S2?, S1], each with its connection. */
  sessions: Array<{ conn: MediaBridgeClient; id: string; count: boolean }>;
}

const connect = (url: string) => MediaBridgeClient.connect(url, { timeoutMs: 30_000 });

/** The ws URL of a bridge started by hostd.ts `startHostd` (its describe() ends with it). */
export function hostdUrl(hostd: Relay): string {
  const m = /(ws:\/\/\S+)\s*$/.exec(hostd.describe());
  if (!m) throw new Error(`no ws:// URL in the bridge's description: ${hostd.describe()}`);
  return m[1]!;
}

class TransferRelay implements Relay {
  readonly srtp = false;
  readonly name: string;
  readonly pid: number;
  /** Sessions made on S1's thread and destroyed again while looking for the other thread (case c). */
  extraSessions = 0;
  private placing: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly hostd: Relay,
    private readonly url: string,
    readonly placement: Placement,
  ) {
    this.name = placement;
    this.pid = hostd.pid;
  }

  describe(): string {
    return `${this.placement}: ${PLACEMENT_NOTE[this.placement]}; ${this.hostd.describe()}`;
  }

  async begin(): Promise<RelayRun> {
    const calls: CallState[] = [];
    this.extraSessions = 0;
    return {
      setup: async (_i, portA, portB, keyA): Promise<CallLegs> => {
        if (keyA) throw new Error('the transfer benchmark runs plain RTP only');
        const st: CallState = { conns: [], sessions: [] };
        calls.push(st);
        const open = async () => {
          const c = await connect(this.url);
          st.conns.push(c);
          return c;
        };
        const close = async (c: MediaBridgeClient) => {
          st.conns.splice(st.conns.indexOf(c), 1);
          await c.close();
        };
        // A call's sessions are placed while no other call's are: the group puts a session on
        // its least-loaded thread, so S1 then S2 of one call land on different threads unless
        // earlier sessions left the group unbalanced (then a few misplaced S2 even it out).
        const placed = this.placing.then(() => this.placeSessions(open, close));
        this.placing = placed.catch(() => undefined);
        const { c1, s1, zConn, s2 } = await placed;
        const bridged = this.placement === 'bridged' || this.placement === 'bridged-threads';
        if (s2 !== null) st.sessions.push({ conn: zConn, id: s2, count: true });
        st.sessions.push({ conn: c1, id: s1, count: s2 === null || bridged });
        const x = await c1.call('endpoint.rtp.create_from_offer', { sdp: legSdp(portA, null) });
        const z = await zConn.call('endpoint.rtp.create_from_offer', { sdp: legSdp(portB, null) });
        if (s2 !== null && bridged) {
          const pair = await c1.call('endpoint.create_bridge', { target_session_id: s2 });
          const side = (await zConn.call('session.info', {})).endpoints.find((e) => e.endpoint_id === pair.target_endpoint_id);
          if (side?.state !== 'connected') throw new Error(`${this.placement}: the target side of the bridge is ${side?.state ?? 'missing'}`);
        } else if (s2 !== null) {
          await c1.call('endpoint.transfer', { endpoint_id: x.endpoint_id, target_session_id: s2 });
          const info = await zConn.call('session.info', {});
          const moved = info.endpoints.find((e) => e.endpoint_id === x.endpoint_id);
          if (!moved) throw new Error(`endpoint ${x.endpoint_id} is not in the target session after the transfer`);
          const relayed = this.placement === 'relayed';
          if (moved.relayed !== relayed) throw new Error(`${this.placement}: the moved endpoint shows relayed: ${String(moved.relayed)} in the target session`);
          const held = (await c1.call('session.info', {})).relays_held;
          if (held !== (relayed ? 1 : 0)) throw new Error(`${this.placement}: the source session holds ${held} relays`);
        }
        const xm = parseRelaySdp(x.sdp_answer);
        const zm = parseRelaySdp(z.sdp_answer);
        if (xm.addr !== HOST || zm.addr !== HOST) throw new Error(`unexpected media address ${xm.addr} ${zm.addr}`);
        return { toA: xm.port, toB: zm.port, rxKeyA: null };
      },
      finish: async () => {
        let rx = 0;
        await Promise.all(
          calls.map(async (st) => {
            for (const s of st.sessions) {
              try {
                if (s.count) {
                  const info: SessionInfo = await s.conn.call('session.info', {});
                  for (const ep of info.endpoints) rx += (ep.counters as Record<string, number> | undefined)?.packetsIn ?? 0;
                }
                await s.conn.call('session.destroy', {});
              } catch (e) {
                process.stderr.write(`# teardown of session ${s.id}: ${(e as Error).message}\n`);
              }
            }
            await Promise.all(st.conns.map((c) => c.close().catch(() => undefined)));
          }),
        );
        if (this.extraSessions) process.stderr.write(`# ${this.placement}: ${this.extraSessions} sessions landed on S1's thread during setup (destroyed once S2 was placed)\n`);
        return { relayRxPkts: rx };
      },
    };
  }

  /** S1 on a connection of its own and, but for the baseline, S2 on another, placed as the placement wants. */
  private async placeSessions(open: () => Promise<MediaBridgeClient>, close: (c: MediaBridgeClient) => Promise<void>): Promise<{ c1: MediaBridgeClient; s1: string; zConn: MediaBridgeClient; s2: string | null }> {
    const c1 = await open();
    const s1 = (await c1.call('session.create', {})).session_id;
    if (this.placement === 'baseline') return { c1, s1, zConn: c1, s2: null };
    const t1 = (await c1.call('session.info', {})).thread_id;
    const misplaced: Array<{ conn: MediaBridgeClient; id: string }> = [];
    for (let tries = 0; tries < MAX_PLACEMENT_TRIES; tries++) {
      const c = await open();
      const id = (await c.call('session.create', SAME_THREAD.has(this.placement) ? { colocate_with: s1 } : {})).session_id;
      const t2 = (await c.call('session.info', {})).thread_id;
      if (SAME_THREAD.has(this.placement) && t2 !== t1) throw new Error(`colocate_with ${s1} (thread ${t1}) placed the new session on thread ${t2}`);
      if (OTHER_THREAD.has(this.placement) && t2 === t1) {
        misplaced.push({ conn: c, id });
        this.extraSessions++;
        continue;
      }
      // Destroyed only now: a session gone earlier would leave S1's thread the less loaded one again.
      for (const m of misplaced) {
        await m.conn.call('session.destroy', {});
        await close(m.conn);
      }
      return { c1, s1, zConn: c, s2: id };
    }
    throw new Error(`${MAX_PLACEMENT_TRIES} new sessions all landed on thread ${t1}, S1's: is the media group 1 thread?`);
  }

  stop(): Promise<void> {
    return this.hostd.stop();
  }
}

/**
 * The bridge `hostd` (from `startHostd`) seen as a relay whose calls are laid out as `placement`
 * says. Its name is the placement; its pid is the bridge's. stop() stops the bridge.
 */
export function transferRelay(hostd: Relay, placement: Placement, url = hostdUrl(hostd)): Relay {
  return new TransferRelay(hostd, url, placement);
}
