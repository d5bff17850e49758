/**
 * The daemon's heartbeat: counts boots and checkpoints a beat every interval, so
 * `hostd inspect` shows when the daemon was last alive (after a crash or kill -9 too).
 */
import { defineActor } from '../../actor/define.js';
import type { HeartbeatArgs, HeartbeatProtocol, HeartbeatState } from './messages.js';

export default defineActor<HeartbeatProtocol, HeartbeatState, HeartbeatArgs>({
  kind: 'heartbeat',
  async init(ctx, restored) {
    const now = Date.now();
    const state: HeartbeatState = {
      bootCount: (restored?.bootCount ?? 0) + 1,
      firstBootAt: restored?.firstBootAt ?? now,
      bootedAt: now,
      lastBeatAt: now,
      beats: 0,
      previousLastBeatAt: restored?.lastBeatAt ?? null,
    };
    await ctx.checkpoint(state);
    ctx.log.info({ bootCount: state.bootCount, previousLastBeatAt: state.previousLastBeatAt }, 'heartbeat started');
    ctx.setInterval(() => {
      ctx.state.lastBeatAt = Date.now();
      ctx.state.beats++;
      void ctx.checkpoint();
    }, ctx.args.intervalMs);
    return state;
  },
  handlers: {
    status: (_m, ctx) => ({ ...ctx.state, uptimeMs: Date.now() - ctx.state.bootedAt }),
  },
});
