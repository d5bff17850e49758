/**
 * Gateway test harness: the gateway service's tree (the SIP server on an ephemeral port, the
 * gateway actor on a free port, the SIP server routed by the gateway's own /sipserver/route)
 * in an ActorSystem, and applications on /control through the typed client. sipp runs come
 * from test/helpers/sip.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { ActorSystem } from '../../runtime/system.js';
import { resolve } from '../../runtime/config/settings.js';
import { SIPSERVER_ID, type SipServerProtocol } from '../../actors/sipserver/messages.js';
import { sipserverChild } from '../../actors/sipserver/service-spec.js';
import { GATEWAY_MODULE, gatewayArgs, gatewaySettings, sipArgs, type GatewayValues } from '../../actors/gateway/service.js';
import { GATEWAY_ID, type GatewayArgs, type GatewayProtocol } from '../../actors/gateway/messages.js';
import { GatewayClient, type ConnectOptions } from '../../actors/gateway/client.js';
import type { ActorRef } from '../../runtime/index.js';
import { freePort } from './sip.js';

export const SDP = ['v=0', 'o=app 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 40010 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', ''].join('\r\n');

export interface GatewayHarness {
  system: ActorSystem;
  /** The SIP server's UDP/TCP port. */
  sipPort: number;
  /** http://127.0.0.1:<port> */
  base: string;
  /** ws://127.0.0.1:<port>/control */
  url: string;
  args: GatewayArgs;
  gateway: ActorRef<GatewayProtocol>;
  server: ActorRef<SipServerProtocol>;
  connect(o?: ConnectOptions): Promise<GatewayClient>;
  healthz(): Promise<{ status: number; body: Record<string, unknown> }>;
  get(path: string): Promise<{ status: number; body: Record<string, unknown> }>;
}

/** An actor system over a fresh state directory, and the clients opened on it; all gone at teardown. */
export async function gatewaySystem(t: ExecutionContext, prefix = 'hostd-gw-'): Promise<{ system: ActorSystem; clients: GatewayClient[] }> {
  const stateDir = mkdtempSync(join(tmpdir(), prefix));
  const system = await ActorSystem.start({ stateDir, logLevel: process.env.TEST_LOG_LEVEL ?? 'silent', groupThreads: 1, poolThreads: 1 });
  const clients: GatewayClient[] = [];
  t.teardown(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await system.shutdown();
    rmSync(stateDir, { recursive: true, force: true });
  });
  return { system, clients };
}

export async function startGateway(t: ExecutionContext, values: Partial<GatewayValues> = {}, overrides: Partial<GatewayArgs> = {}): Promise<GatewayHarness> {
  const { system, clients } = await gatewaySystem(t);
  const v: GatewayValues = { ...resolve(gatewaySettings, {}, {}), port: await freePort(), sipPort: 0, ...values };
  const port = v.port;
  const args = gatewayArgs(v, { mediaLinkModule: null, ...overrides });
  await system.start({ id: 'gateway.supervisor', children: [sipserverChild(sipArgs(v)), { id: GATEWAY_ID, module: GATEWAY_MODULE, args }] });
  const server = system.ref<SipServerProtocol>(SIPSERVER_ID);
  const sipPort = (await server.request({ type: 'info' })).udpPort;
  const base = `http://127.0.0.1:${port}`;
  const get = async (path: string) => {
    const res = await fetch(base + path);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return {
    system,
    sipPort,
    base,
    url: `ws://127.0.0.1:${port}/control`,
    args,
    gateway: system.ref<GatewayProtocol>(GATEWAY_ID),
    server,
    async connect(o: ConnectOptions = {}) {
      const c = await GatewayClient.connect(`ws://127.0.0.1:${port}/control`, o);
      clients.push(c);
      return c;
    },
    healthz: () => get('/healthz'),
    get,
  };
}

/** An application that registers `user` and answers every INVITE with SDP; records what it saw. */
export async function answeringApp(h: GatewayHarness, user: string, answer: (p: { callId: string; sdp: string }) => Record<string, unknown> | null = () => ({ action: 'answer', sdp: SDP })) {
  const app = await h.connect();
  const invites: Array<{ callId: string; sdp: string; from: string; to: string; requestUri: string; headers: Record<string, string> }> = [];
  app.requests$.subscribe((r) => {
    if (r.method === 'sip.invite') {
      invites.push(r.params as (typeof invites)[number]);
      const a = answer(r.params as { callId: string; sdp: string });
      if (a) app.answer(r.id, a);
    }
  });
  await app.call('route.register', { routes: [{ match: 'exact', value: user }] });
  return { app, invites };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `fn` until it is true (or throw after `ms`). */
export async function until(fn: () => Promise<boolean> | boolean, ms = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return;
    await sleep(50);
  }
  throw new Error(`${what} not reached within ${ms} ms`);
}

/** The stand-in media link of the gateway's tests (test/fixtures/gateway-media-stub.ts). */
export const MEDIA_STUB = new URL('../fixtures/gateway-media-stub.js', import.meta.url).href;
