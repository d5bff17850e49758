/**
 * The Node dgram floor (floor-relay.ts) as a relay under test: packets forwarded untouched by
 * a bare Node process, in three variants (see startFloor). It shows how much of the
 * bridge's per-packet CPU is Node's UDP I/O itself and how much is the bridge's own work.
 * Commands are answered in order, so setup is serialised through one queue. Plain RTP only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { CallLegs, Relay, RelayRun } from './relay.js';

const SCRIPT = new URL('./floor-relay.js', import.meta.url);

class Floor implements Relay {
  readonly srtp = false;
  private waiters: Array<(line: string) => void> = [];
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly name: string, readonly pid: number, private readonly child: ChildProcess, lines: AsyncIterable<string> & { on(e: 'line', f: (l: string) => void): unknown }) {
    lines.on('line', (l) => this.waiters.shift()?.(l));
  }

  private ask(cmd: string): Promise<string> {
    const p = this.queue.then(
      () =>
        new Promise<string>((resolve) => {
          this.waiters.push(resolve);
          this.child.stdin!.write(cmd + '\n');
        }),
    );
    this.queue = p.catch(() => undefined);
    return p;
  }

  describe(): string {
    const how = this.name.endsWith('/worker') ? 'on a worker thread, connected' : this.name.endsWith('/unconnected') ? 'on the main thread, bound to 0.0.0.0, unconnected, send callback' : 'on the main thread, connected';
    return `${this.name} pid ${this.pid} (Node ${process.version} dgram, sockets ${how}, no parsing)`;
  }

  async begin(): Promise<RelayRun> {
    return {
      setup: async (_i, portA, portB): Promise<CallLegs> => {
        const r = (await this.ask(`open ${portA} ${portB}`)).split(' ');
        if (r[0] !== 'ok') throw new Error(`node-floor: ${r.join(' ')}`);
        return { toA: Number(r[1]), toB: Number(r[2]), rxKeyA: null };
      },
      finish: async () => {
        await this.ask('close');
        return { relayRxPkts: null };
      },
    };
  }

  async stop(): Promise<void> {
    const c = this.child;
    if (c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.stdin!.end();
    const t = setTimeout(() => c.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  }
}

export const FLOOR_VARIANTS = ['main', 'worker', 'unconnected'] as const;
export type FloorVariant = (typeof FLOOR_VARIANTS)[number];

/**
 * `main`: sockets on the main thread, connected (row node-floor); `worker`: the same on a
 * worker thread (node-floor/worker); `unconnected`: on the main thread, used the way the
 * bridge's sockets.ts uses them (node-floor/unconnected).
 */
export async function startFloor(variant: FloorVariant = 'main'): Promise<Relay> {
  const flags = variant === 'main' ? [] : [`--${variant}`];
  const child = spawn(process.execPath, [SCRIPT.pathname, ...flags], { stdio: ['pipe', 'pipe', 'inherit'] });
  const rl = createInterface({ input: child.stdout! });
  const ready = await new Promise<string>((resolve, reject) => {
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`floor-relay exited ${code}`)));
  });
  if (!ready.startsWith('READY ')) throw new Error(`floor-relay printed ${ready}`);
  return new Floor(variant === 'main' ? 'node-floor' : `node-floor/${variant}`, child.pid!, child, rl);
}
