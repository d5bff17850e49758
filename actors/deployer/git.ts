/**
 * A thin wrapper over the git command line (Debian `git`): execFile with explicit arguments,
 * never a shell, with an environment that reads no user or system configuration, never prompts
 * for credentials, and commits as the deployment service. A failure is a GitError carrying git's
 * stderr, which the pusher reads (a rejected push, a hook's refusal).
 */
import { execFile } from 'node:child_process';

export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly stderr: string,
    readonly exitCode: number | null,
  ) {
    super(`git ${args[0] ?? ''} failed${exitCode === null ? '' : ` (exit ${exitCode})`}: ${stderr.trim().split('\n').slice(-5).join(' | ')}`);
    this.name = 'GitError';
  }
}

/** Longest a git command may run (a fetch or push of a large IaC repository over a slow link). */
const GIT_TIMEOUT_MS = 120_000;

const ENV: NodeJS.ProcessEnv = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_ASKPASS: '/bin/false',
  GIT_SSH_COMMAND: 'ssh -o BatchMode=yes',
  GIT_AUTHOR_NAME: 'hostd deployer',
  GIT_AUTHOR_EMAIL: 'deployer@hostd.invalid',
  GIT_COMMITTER_NAME: 'hostd deployer',
  GIT_COMMITTER_EMAIL: 'deployer@hostd.invalid',
  LC_ALL: 'C',
};

/**
 * What lets git authenticate to an HTTP(S) remote with a stored credential: an `Authorization:
 * Basic` header given through the environment (GIT_CONFIG_COUNT…, never on the command line,
 * where other users could read it). `user:token` is sent as is; a bare token with the user
 * `oauth2`, which GitLab accepts for personal, project and group access tokens. Nothing for other
 * remotes or without a credential.
 */
export function credentialEnv(url: string, credential: string | null): NodeJS.ProcessEnv {
  if (credential === null || !/^https?:\/\//i.test(url)) return {};
  const pair = credential.includes(':') ? credential : `oauth2:${credential}`;
  return { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from(pair, 'utf8').toString('base64')}` };
}

/**
 * Run `git <args>` in `cwd`; resolves with stdout as text, rejects with a GitError. A git still
 * running when `signal` aborts (the actor instance that started it ended) is killed.
 */
export async function git(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}, signal?: AbortSignal): Promise<string> {
  return (await gitBytes(cwd, args, env, signal)).toString('utf8');
}

/** The same, with stdout as bytes (file contents: `git cat-file blob`). */
export function gitBytes(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}, signal?: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile('git', args as string[], { cwd, env: { ...ENV, ...env }, timeout: GIT_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024, encoding: 'buffer', signal }, (err, stdout, stderr) => {
      if (err) reject(new GitError(args, stderr.toString('utf8'), typeof err.code === 'number' ? err.code : null));
      else resolve(stdout);
    });
  });
}
