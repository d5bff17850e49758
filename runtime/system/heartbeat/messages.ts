import type { Protocol } from '../../actor/protocol.js';

export type HeartbeatMsg = { type: 'status' };

export interface HeartbeatState {
  bootCount: number;
  firstBootAt: number;
  bootedAt: number;
  lastBeatAt: number;
  beats: number;
  /** lastBeatAt of the previous boot: when the daemon was last seen alive before this start. */
  previousLastBeatAt: number | null;
}

export interface HeartbeatReplies {
  status: HeartbeatState & { uptimeMs: number };
}

export type HeartbeatProtocol = Protocol<HeartbeatMsg, HeartbeatReplies>;

export interface HeartbeatArgs {
  intervalMs: number;
}

export const HEARTBEAT_ID = 'hostd.heartbeat';
