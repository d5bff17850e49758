/**
 * Media link test harness: a link over real media bridges (test/helpers/media.ts starts them
 * in-process on ephemeral ports), the events it hands to owners, and the log lines it writes.
 */
import net from 'node:net';
import { Writable } from 'node:stream';
import type { ExecutionContext } from 'ava';
import pino from 'pino';
import { createMediaLink, type MediaLinkOptions } from '../../actors/gateway/media/link.js';
import type { MediaLink } from '../../actors/gateway/media-link.js';
import { BRIDGE_ID, type BridgeProtocol } from '../../actors/media-bridge/messages.js';
import type { Bridge } from '../helpers/media.js';
import { sleep } from '../helpers/media.js';

export interface Delivered {
  owner: string;
  name: string;
  data: Record<string, unknown>;
}

export interface Harness {
  link: MediaLink;
  /** Every event handed to an owner, in order. */
  events: Delivered[];
  /** Every log line, parsed. */
  logs: Array<Record<string, unknown>>;
  /** The next event for `owner` named `name` matching `match` (searching what came already too). */
  event(owner: string, name: string, match?: (data: Record<string, unknown>) => boolean, ms?: number): Promise<Record<string, unknown>>;
}

export function startLink(t: ExecutionContext, backends: string[], o: Partial<MediaLinkOptions> = {}): Harness {
  const events: Delivered[] = [];
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const log = pino({ level: 'debug' }, sink);
  const link = createMediaLink({ backends, log, events: { event: (owner, name, data) => events.push({ owner, name, data: data as Record<string, unknown> }) }, ...o });
  t.teardown(() => link.close());
  return {
    link,
    events,
    logs,
    async event(owner, name, match = () => true, ms = 10_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const hit = events.find((e) => e.owner === owner && e.name === name && match(e.data));
        if (hit) return hit.data;
        if (Date.now() > deadline) throw new Error(`no ${name} event for owner ${owner} within ${ms} ms`);
        await sleep(20);
      }
    },
  };
}

/** Sessions a bridge holds (its own count, from the bridge actor). */
export async function bridgeSessions(b: Bridge): Promise<number> {
  const info = await b.system.ref<BridgeProtocol>(BRIDGE_ID).request({ type: 'info' });
  return info.sessions;
}

/** The command port a bridge listens on. */
export function portOf(b: Bridge): number {
  return Number(new URL(b.url).port);
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function refusal(t: ExecutionContext, p: Promise<unknown>): Promise<{ code: string; message: string }> {
  const err = await t.throwsAsync(p);
  return { code: (err as unknown as { code: string }).code, message: err?.message ?? '' };
}

/**
 * A TCP relay of the test on a port of its own, in front of a real bridge: the backend address a
 * link is given when a test kills a bridge and starts another at the same address. (A bridge
 * cannot listen again on its own port at once: the connections it closed leave that port in
 * TIME_WAIT, and uWebSockets does not listen over them.) `stop` closes the relay's listener and
 * every connection through it, so the address refuses connections like a dead host; `start`
 * listens again on the same port, relaying to the given bridge.
 */
export class Relay {
  private server: net.Server | null = null;
  private sockets = new Set<net.Socket>();
  port = 0;

  static async open(t: ExecutionContext, target: Bridge): Promise<Relay> {
    const r = new Relay();
    await r.start(target);
    t.teardown(() => r.stop());
    return r;
  }

  get url(): string {
    return `ws://127.0.0.1:${this.port}/`;
  }

  async start(target: Bridge): Promise<void> {
    const to = portOf(target);
    const server = net.createServer((client) => {
      const upstream = net.connect(to, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
