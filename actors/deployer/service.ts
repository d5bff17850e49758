/** The deployment service as a service of the daemon: its settings and its supervision tree (the deployer actor). */
import { int, str, type Values } from '../../runtime/config/settings.js';
import { defineService } from '../../runtime/service.js';
import { DEFAULT_MONITOR_TIMEOUT_SECS, MONITOR_TIMEOUT_MAX, MONITOR_TIMEOUT_MIN } from '../../protocols/deploy/targets.js';
import { isLoopback } from '../../runtime/http/bearer.js';
import { DEPLOYER_ID, type DeployerArgs } from './messages.js';
import { decodeJobKey } from './keys.js';
import { deployerCommand } from './cli.js';

/** Helm's own loader refuses a chart archive above this; the upload cap defaults to it (docs/deployer.md "Chart tarballs"). */
const DEFAULT_UPLOAD_BYTES = 10 * 1024 * 1024;

export const deployerSettings = {
  port: int({ env: 'DEPLOYER_PORT', flag: 'deployer-port', description: 'Port of the deployment service HTTP API', min: 0, max: 65535, default: 3003 }),
  host: str({ env: 'DEPLOYER_HOST', flag: 'deployer-host', description: 'Address the deployment service binds (loopback by default; any other address needs DEPLOYER_ADMIN_TOKEN)', default: '127.0.0.1' }),
  monitorTimeoutSecs: int({ env: 'DEPLOY_MONITOR_TIMEOUT_SECS', flag: 'deploy-monitor-timeout-secs', description: 'Rollout budget of targets without monitorTimeoutSecs (seconds)', min: MONITOR_TIMEOUT_MIN, max: MONITOR_TIMEOUT_MAX, default: DEFAULT_MONITOR_TIMEOUT_SECS }),
  adminToken: str({ env: 'DEPLOYER_ADMIN_TOKEN', flag: 'deployer-admin-token', description: 'An admin token (hdt_…, scope admin) to seed; stored hashed; unset removes the seeded one', expect: 'hdt_ followed by at least 32 characters, or empty', default: '', valid: (v) => v === '' || /^hdt_[A-Za-z0-9_-]{32,}$/.test(v) }),
  jobTokenKey: str({ env: 'DEPLOYER_JOB_TOKEN_KEY', flag: 'deployer-job-token-key', description: 'HMAC key of local job tokens (base64 of at least 32 bytes); empty: generated once and kept in the state directory', expect: 'base64 of at least 32 bytes, or empty', default: '', valid: (v) => v === '' || decodeJobKey(v) !== null }),
  maxUploadBytes: int({ env: 'DEPLOYER_MAX_UPLOAD_BYTES', flag: 'deployer-max-upload-bytes', description: 'Largest chart upload (413 above)', min: 1024, max: 1024 ** 3, default: DEFAULT_UPLOAD_BYTES }),
  maxBodyBytes: int({ env: 'DEPLOYER_MAX_BODY_BYTES', flag: 'deployer-max-body-bytes', description: 'Largest JSON request body (413 above)', min: 1024, max: 64 * 1024 * 1024, default: 1024 * 1024 }),
  gitlabUrl: str({ env: 'DEPLOYER_GITLAB_URL', flag: 'deployer-gitlab-url', description: 'GitLab whose job API (GET /api/v4/job) verifies CI job tokens that are not local ones; empty: local job tokens only', expect: 'an http(s) URL, or empty', default: '', valid: (v) => v === '' || /^https?:\/\/[^/\s]+\/?[^\s]*$/.test(v) }),
  heartbeatMs: int({ env: 'DEPLOYER_SSE_HEARTBEAT_MS', flag: 'deployer-sse-heartbeat-ms', description: 'Interval of the SSE heartbeat while a deployment is not terminal', min: 10, max: 3_600_000, default: 15_000 }),
  monitorPollMs: int({ env: 'DEPLOYER_MONITOR_POLL_MS', flag: 'deployer-monitor-poll-ms', description: 'Interval of the rollout monitors\' polls of each target (two Docker API calls per swarm target)', min: 50, max: 60_000, default: 1000 }),
  stabilityMs: int({ env: 'DEPLOYER_STABILITY_MS', flag: 'deployer-stability-ms', description: 'How long a converged swarm service must stay so (since its newest task started) before it counts as deployed', min: 0, max: 600_000, default: 5000 }),
  reconcileMs: int({ env: 'DEPLOYER_RECONCILE_MS', flag: 'deployer-reconcile-ms', description: 'Interval of the embedded swarm reconciler\'s fetch of each IaC branch (it also runs at once after each push)', min: 100, max: 3_600_000, default: 5000 }),
};

export type DeployerValues = Values<typeof deployerSettings>;

export const DEPLOYER_MODULE = new URL('./actor.js', import.meta.url).href;

/** The actor's arguments from the settings' values; throws with a clear message on a bad mix. */
export function deployerArgs(stateDir: string, v: DeployerValues): DeployerArgs {
  if (v.adminToken === '' && !isLoopback(v.host)) {
    throw new Error(`DEPLOYER_HOST ${v.host} is not a loopback address: set DEPLOYER_ADMIN_TOKEN (the admin API must not be open on the network without a token)`);
  }
  return {
    host: v.host,
    port: v.port,
    stateDir,
    defaultMonitorTimeoutSecs: v.monitorTimeoutSecs,
    seedAdminToken: v.adminToken === '' ? null : v.adminToken,
    jobTokenKey: v.jobTokenKey,
    maxUploadBytes: v.maxUploadBytes,
    maxBodyBytes: v.maxBodyBytes,
    gitlabUrl: v.gitlabUrl === '' ? null : v.gitlabUrl,
    heartbeatMs: v.heartbeatMs,
    monitorPollMs: v.monitorPollMs,
    stabilityMs: v.stabilityMs,
    reconcileMs: v.reconcileMs,
  };
}

export const service = defineService({
  name: 'deployer',
  settings: deployerSettings,
  command: deployerCommand,
  supervisor: ({ settings, values }) => ({
    id: 'deployer.supervisor',
    children: [{ id: DEPLOYER_ID, module: DEPLOYER_MODULE, args: deployerArgs(settings.stateDir, values), shutdownMs: 10_000 }],
  }),
});
