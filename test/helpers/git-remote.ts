/**
 * Real git remotes for the deployment service's tests: a bare repository with one first commit
 * (reached over file://, or over git:// with `git daemon` on a loopback port, killed at
 * teardown), hooks written as shell scripts, and a look at what the remote holds.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';

const ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

export function gitSync(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export interface Remote {
  /** the directory that holds `<name>.git` (git daemon's base path) */
  base: string;
  bare: string;
  url: string;
  /** the tip of main */
  head(): string;
  /** commits of main, newest first: sha and full message */
  log(): { sha: string; message: string }[];
  /** a file at main, or null */
  show(path: string): string | null;
  /** install a hook (shell script body) */
  hook(name: string, script: string): void;
}

export function bareRemote(t: ExecutionContext, name = 'infra'): Remote {
  const base = mkdtempSync(join(tmpdir(), 'hostd-iac-'));
  t.teardown(() => rmSync(base, { recursive: true, force: true }));
  const bare = join(base, `${name}.git`);
  gitSync(base, ['init', '-q', '--bare', '-b', 'main', bare]);
  const seed = join(base, 'seed');
  gitSync(base, ['clone', '-q', bare, seed]);
  writeFileSync(join(seed, 'README.md'), '# infra\n');
  gitSync(seed, ['add', '.']);
  gitSync(seed, ['commit', '-q', '-m', 'first']);
  gitSync(seed, ['push', '-q', 'origin', 'HEAD:main']);
  rmSync(seed, { recursive: true, force: true });
  return {
    base,
    bare,
    url: `file://${bare}`,
    head: () => gitSync(bare, ['rev-parse', 'main']).trim(),
    log: () =>
      gitSync(bare, ['log', '--format=%H%x1f%B%x1e', 'main'])
        .split('\x1e')
        .map((r) => r.replace(/^\n/, ''))
        .filter((r) => r !== '')
        .map((r) => {
          const [sha, message] = r.split('\x1f');
          return { sha: sha as string, message: message as string };
        }),
    show: (path) => {
      try {
        return execFileSync('git', ['show', `main:${path}`], { cwd: bare, env: ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      } catch {
        return null;
      }
    },
    hook: (hookName, script) => {
      const p = join(bare, 'hooks', hookName);
      writeFileSync(p, `#!/bin/sh\n${script}\n`);
      chmodSync(p, 0o755);
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** `git daemon` serving `remote.base` on a loopback port (pushes allowed); its git:// URL. Killed at teardown. */
export async function gitDaemon(t: ExecutionContext, remote: Remote): Promise<string> {
  return (await gitDaemonProcess(t, remote)).url;
}

/**
 * gitDaemon, with its process: a test can stop it (SIGSTOP) so that every fetch and push to the
 * remote hangs on a connection the kernel accepted, and let it go on (SIGCONT). Killed at
 * teardown, stopped or not.
 */
export async function gitDaemonProcess(t: ExecutionContext, remote: Remote): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const proc = spawn('git', ['daemon', '--reuseaddr', '--export-all', '--enable=receive-pack', `--base-path=${remote.base}`, `--port=${port}`, '--listen=127.0.0.1', remote.base], { env: ENV, stdio: 'ignore' });
  t.teardown(() => {
    proc.kill('SIGCONT');
    proc.kill('SIGTERM');
  });
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const c = connect(port, '127.0.0.1', () => {
        c.destroy();
        resolve(true);
      });
      c.on('error', () => resolve(false));
    });
    if (up) return { url: `git://127.0.0.1:${port}/${remote.bare.slice(remote.base.length + 1)}`, proc };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('git daemon did not start');
}

/**
 * The remote over smart HTTP, behind HTTP Basic authentication: a loopback HTTP server that
 * refuses requests without `Authorization: Basic base64(user:password)` (401) and hands the others
 * to `git http-backend` (CGI), the server side git ships. Returns the URL and the requests seen.
 */
export async function gitHttp(t: ExecutionContext, remote: Remote, user: string, password: string): Promise<{ url: string; seen: { path: string; authorized: boolean }[] }> {
  const { createServer: createHttpServer } = await import('node:http');
  const expected = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const seen: { path: string; authorized: boolean }[] = [];
  const server = createHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const authorized = req.headers.authorization === expected;
    seen.push({ path: url.pathname, authorized });
    if (!authorized) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end();
      return;
    }
    const cgi = spawn('git', ['http-backend'], {
      env: {
        ...ENV,
        GIT_PROJECT_ROOT: remote.base,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
        REMOTE_USER: user,
        REMOTE_ADDR: '127.0.0.1',
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let started = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (started) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      started = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const i = line.indexOf(':');
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === 'status') status = Number(v.split(' ')[0]);
        else headers[k] = v;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    cgi.stdout.on('end', () => res.end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/${remote.bare.slice(remote.base.length + 1)}`, seen };
}
