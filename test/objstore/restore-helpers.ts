/**
 * What the journal, snapshot and restore tests share: the `hostd` command run as a child process
 * (restore and backup are commands of their own, run without the daemon), objects PUT with their
 * MIME type, and the byte-exact read-back with the headers a restore must give back.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import { startLock } from './harness.js';
import { md5 } from './maint.js';

const BIN = fileURLToPath(new URL('../../workers/main.js', import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Run `hostd <args>` to its end. Under the stores' start lock: restore probes every block device
 * of the machine (as a store's boot does), which must not race another test's provisioning.
 */
export async function hostd(args: string[], opts: { timeoutMs?: number; lock?: boolean } = {}): Promise<CliRun> {
  const release = opts.lock === false ? () => undefined : await startLock();
  try {
    return await new Promise<CliRun>((resolve) => {
      execFile(process.execPath, [BIN, ...args], { timeout: opts.timeoutMs ?? 300_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
        resolve({ code, stdout, stderr });
      });
    });
  } finally {
    release();
  }
}

export interface Stored {
  body: Buffer;
  mime: string;
  id: string;
}

/** PUT one object with its type; returns what a read must give back. */
export async function putOne(base: string, path: string, body: Buffer, mime = 'application/octet-stream'): Promise<Stored> {
  const res = await fetch(`${base}${path}`, { method: 'PUT', body, headers: { 'Content-Type': mime } });
  if (res.status !== 201) throw new Error(`PUT ${path}: ${res.status} ${await res.text()}`);
  return { body, mime, id: res.headers.get('x-object-id')! };
}

/** Every object reads back byte-exact, with its id, type and MD5 (asserted). */
export async function assertObjects(t: ExecutionContext, base: string, objects: Map<string, Stored>): Promise<void> {
  let bad = 0;
  for (const [path, o] of objects) {
    const res = await fetch(`${base}${path}`);
    const got = Buffer.from(await res.arrayBuffer());
    const ok = res.status === 200 && res.headers.get('x-object-id') === o.id && res.headers.get('content-type') === o.mime && res.headers.get('content-md5') === md5(o.body) && got.equals(o.body);
    if (!ok) {
      bad++;
      if (bad <= 5) t.log(`${path}: ${res.status} id ${res.headers.get('x-object-id')} (want ${o.id}) type ${res.headers.get('content-type')} (want ${o.mime}) ${got.length} bytes (want ${o.body.length})`);
    }
  }
  t.is(bad, 0, `${bad} of ${objects.size} objects did not read back as stored`);
}

/** Every path answers 404 (asserted). */
export async function assertGone(t: ExecutionContext, base: string, paths: Iterable<string>): Promise<void> {
  for (const p of paths) t.is((await fetch(`${base}${p}`)).status, 404, `${p} stays deleted`);
}

/** Remove the record database of a stopped store (the LMDB environment and its lock). */
export function dropDatabase(stateDir: string): void {
  for (const f of readdirSync(stateDir)) if (f.startsWith('hostd.lmdb')) rmSync(join(stateDir, f), { force: true, recursive: true });
  if (existsSync(join(stateDir, 'hostd.lmdb'))) throw new Error('the record database is still there');
}

/** The journal segment files on each volume of a store's state directory, by mount. */
export function journalFiles(stateDir: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const mnt = join(stateDir, 'mnt');
  for (const m of readdirSync(mnt)) {
    const dir = join(mnt, m, 'objstore', 'journal');
    if (existsSync(dir)) out.set(m, readdirSync(dir).filter((f) => f.endsWith('.jnl')));
  }
  return out;
}

const CHILD = fileURLToPath(new URL('./store-child.js', import.meta.url));

export interface ChildStore {
  proc: ChildProcess;
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * A store in a child process over `stateDir` (store-child.ts), so a test can kill -9 it; killed by
 * the teardown of `t` if still running.
 */
export function childStore(t: { teardown(fn: () => void | Promise<void>): void }, stateDir: string): Promise<ChildStore> {
  const proc = spawn(process.execPath, ['--enable-source-maps', CHILD, JSON.stringify({ stateDir })], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  t.teardown(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await exited;
    }
  });
  let err = '';
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => (err = (err + c).slice(-4000)));
  return new Promise((resolve, reject) => {
    let buf = '';
    let url: string | null = null;
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`the store child did not come up within 120 s: ${err}`));
    }, 120_000);
    proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buf += chunk;
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (url || !line.startsWith('{"url"')) continue;
        url = (JSON.parse(line) as { url: string }).url;
        clearTimeout(timer);
        resolve({ proc, url, exited });
      }
    });
    void exited.then((e) => {
      clearTimeout(timer);
      if (!url) reject(new Error(`the store child exited (${e.code ?? e.signal}) before serving: ${err}`));
    });
  });
}

/**
 * `hostd restore` in a child process, killed with SIGKILL as soon as its output shows `when`
 * (a progress line); resolves with what it printed and how it ended.
 */
export async function restoreKilledAt(args: string[], when: RegExp): Promise<{ stdout: string; signal: NodeJS.Signals | null; code: number | null }> {
  const release = await startLock();
  try {
    const proc = spawn(process.execPath, [BIN, 'restore', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    proc.stdout!.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      if (when.test(stdout) && proc.exitCode === null) proc.kill('SIGKILL');
    });
    proc.stderr!.resume();
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => proc.on('exit', (c, s) => resolve([c, s])));
    return { stdout, signal, code };
  } finally {
    release();
  }
}
