/**
 * hostd's media bridge as a relay under test: serve.js in a child process (or one already
 * running: --hostd-url/--hostd-pid), driven over its command WebSocket with the typed client.
 * One call = `session.create`, then `endpoint.rtp.create_from_offer` for leg A (RTP/SAVP with
 * the generator's key in SRTP mode: the answer carries the bridge's key) and for leg B. A
 * connection binds one session at a time and runs its commands in order, so setup uses a pool
 * of connections as wide as the generator's setup concurrency. At the end each session is
 * re-attached, its endpoints' `packetsIn` summed (the bridge's received count) and destroyed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createInterface } from 'node:readline';
import { MediaBridgeClient } from '../../actors/media-bridge/client.js';
import { HOST, legSdp, parseRelaySdp } from './sdp.js';
import { Pool, type CallLegs, type Relay, type RelayRun } from './relay.js';

const SERVE = new URL('./serve.js', import.meta.url);

class Hostd implements Relay {
  readonly srtp = true;
  constructor(
    readonly name: string,
    readonly pid: number,
    readonly url: string,
    private readonly groupThreads: number | null,
    private readonly child: ChildProcess | null,
  ) {}

  describe(): string {
    let threads = '?';
    try {
      threads = String(fs.readdirSync(`/proc/${this.pid}/task`).length);
    } catch {
      /* gone */
    }
    const g = this.groupThreads === null ? 'external' : `media group threads ${this.groupThreads}`;
    return `hostd media bridge pid ${this.pid} (${g}; ${threads} OS threads in the process), ${this.url}`;
  }

  async begin(_calls: number, _tag: string, concurrency: number): Promise<RelayRun> {
    const conns = await Promise.all(Array.from({ length: concurrency }, () => MediaBridgeClient.connect(this.url, { timeoutMs: 30_000 })));
    const pool = new Pool(conns.slice());
    const sessions: string[] = [];
    return {
      setup: (_i, portA, portB, keyA) =>
        pool.use(async (c): Promise<CallLegs> => {
          const s = await c.call('session.create', {});
          sessions.push(String(s.session_id));
          const a = await c.call('endpoint.rtp.create_from_offer', { sdp: legSdp(portA, keyA ? keyA.toString('base64') : null) });
          const b = await c.call('endpoint.rtp.create_from_offer', { sdp: legSdp(portB, null) });
          const am = parseRelaySdp(String(a.sdp_answer));
          const bm = parseRelaySdp(String(b.sdp_answer));
          if (am.addr !== HOST || bm.addr !== HOST) throw new Error(`unexpected media address ${am.addr} ${bm.addr}`);
          if (keyA && !am.crypto) throw new Error('no a=crypto in the answer for leg A:\n' + String(a.sdp_answer));
          return { toA: am.port, toB: bm.port, rxKeyA: keyA ? Buffer.from(am.crypto!, 'base64') : null };
        }),
      finish: async () => {
        let rx = 0;
        await Promise.all(
          sessions.map((id) =>
            pool.use(async (c) => {
              try {
                await c.call('session.attach', { session_id: id });
                const info = await c.call('session.info', {});
                for (const ep of (info.endpoints ?? []) as Array<{ counters?: Record<string, number> }>) rx += ep.counters?.packetsIn ?? 0;
                await c.call('session.destroy', {});
              } catch (e) {
                process.stderr.write(`# hostd teardown ${id}: ${(e as Error).message}\n`);
              }
            }),
          ),
        );
        await Promise.all(conns.map((c) => c.close().catch(() => undefined)));
        return { relayRxPkts: rx };
      },
    };
  }

  async stop(): Promise<void> {
    const c = this.child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGTERM');
    const t = setTimeout(() => c.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(t);
  }
}

/** Spawn serve.js with `groupThreads` media threads; `nodeArgs` e.g. ['--cpu-prof', '--cpu-prof-dir', dir]. */
export async function startHostd(o: { name: string; groupThreads: number; nodeArgs?: string[] }): Promise<Relay & { url: string }> {
  const child = spawn(process.execPath, [...(o.nodeArgs ?? []), SERVE.pathname, '--port', '0', '--group-threads', String(o.groupThreads)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error('serve.js did not print its URL within 60 s')), 60_000);
    rl.on('line', (l) => {
      if (l.startsWith('URL ')) {
        clearTimeout(timer);
        resolve(l);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve.js exited ${code} before it was ready`));
    });
  });
  child.stdout!.resume();
  const m = /^URL (\S+) PID (\d+)/.exec(line);
  if (!m) throw new Error(`serve.js printed ${line}`);
  return new Hostd(o.name, Number(m[2]), m[1]!, o.groupThreads, child);
}

export function externalHostd(url: string, pid: number): Relay {
  return new Hostd('hostd', pid, url, null, null);
}
