/** What the deployer actor accepts from the runtime and from tests: its arguments and the `info` request. */
import type { Protocol } from '../../runtime/index.js';

export type DeployerMsg =
  /** The bound port (tests listen on port 0) and the event streams open now. */
  { type: 'info' };

export interface DeployerReplies {
  info: { port: number; streams: number };
}

export type DeployerProtocol = Protocol<DeployerMsg, DeployerReplies>;

export const DEPLOYER_ID = 'deployer';

export interface DeployerArgs {
  host: string;
  port: number;
  stateDir: string;
  /** the server default of targets without monitorTimeoutSecs (DEPLOY_MONITOR_TIMEOUT_SECS) */
  defaultMonitorTimeoutSecs: number;
  /** an admin token to seed (stored hashed, scope admin) or null */
  seedAdminToken: string | null;
  /** the local job tokens' HMAC key, base64url (at least 32 bytes) */
  jobTokenKey: string;
  /** largest chart upload, bytes (413 above) */
  maxUploadBytes: number;
  /** largest JSON request body, bytes (413 above) */
  maxBodyBytes: number;
  /** the GitLab whose job API verifies non-local job tokens, or null (local tokens only) */
  gitlabUrl: string | null;
  /** SSE heartbeat interval while a deployment is not terminal */
  heartbeatMs: number;
  /** rollout monitors poll their target this often */
  monitorPollMs: number;
  /** a converged swarm service must stay so this long (since its last task started) to be deployed */
  stabilityMs: number;
  /** the embedded swarm reconciler fetches each IaC branch this often (and at once after a push) */
  reconcileMs: number;
}
