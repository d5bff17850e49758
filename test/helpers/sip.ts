/**
 * SIP server test harness: a sipserver actor on an ephemeral port, a loopback HTTP route
 * handler (the application's side of the route interface), the test gateway fixture attached
 * by tag, sipp runs in the foreground, and raw UDP/TCP peers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { ActorSystem } from '../../runtime/system.js';
import type { ActorRef } from '../../runtime/index.js';
import { resolve } from '../../runtime/config/settings.js';
import { SIPSERVER_ID, type SipServerProtocol } from '../../actors/sipserver/messages.js';
import { sipserverArgs, sipserverChild, sipserverSettings, type SipServerValues } from '../../actors/sipserver/service-spec.js';
import type { SipGwProtocol } from '../fixtures/sipgw/messages.js';

export const SIPGW = new URL('../fixtures/sipgw/actor.js', import.meta.url).href;
/** test/sip-scenarios in the source tree (the XML is not compiled). */
export const SCENARIOS = new URL('../../../test/sip-scenarios/', import.meta.url).pathname;

export interface RouteAnswer {
  status?: number;
  body: string;
  delayMs?: number;
}

/** A loopback HTTP route handler: records each query, answers with `answer(query)`. */
export interface RouteHandler {
  url: string;
  queries: Array<Record<string, string>>;
  answer: (q: Record<string, string>) => RouteAnswer;
}

export async function startRouteHandler(t: ExecutionContext): Promise<RouteHandler> {
  const h: RouteHandler = { url: '', queries: [], answer: () => ({ body: JSON.stringify({ action: 'route', data: { tag: 'gw1' } }) }) };
  const server = http.createServer((req, res) => {
    const q = Object.fromEntries(new URL(req.url ?? '/', 'http://x').searchParams);
    h.queries.push(q);
    const a = h.answer(q);
    const send = () => res.writeHead(a.status ?? 200, { 'content-type': 'application/json' }).end(a.body);
    if (a.delayMs) setTimeout(send, a.delayMs);
    else send();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => {
    server.closeAllConnections();
    server.close(() => r());
  }));
  h.url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/sipserver/route`;
  return h;
}

export interface SipHarness {
  system: ActorSystem;
  port: number;
  routes: RouteHandler;
  server: ActorRef<SipServerProtocol>;
  gw: ActorRef<SipGwProtocol>;
}

/** A sipserver (port 0) routed by a loopback handler, with the fixture gateway attached as `gw1`. */
/** `routeActor`: ask that actor by `route.lookup` message instead of the HTTP handler. */
export async function startSip(t: ExecutionContext, values: Partial<SipServerValues> = {}, withGateway = true, routeActor: string | null = null): Promise<SipHarness> {
  const routes = await startRouteHandler(t);
  const stateDir = mkdtempSync(join(tmpdir(), 'hostd-sip-'));
  const system = await ActorSystem.start({ stateDir, logLevel: process.env.TEST_LOG_LEVEL ?? 'silent', groupThreads: 1, poolThreads: 1 });
  t.teardown(async () => {
    await system.shutdown();
    rmSync(stateDir, { recursive: true, force: true });
  });
  const args = sipserverArgs({ ...resolve(sipserverSettings, {}, {}), port: 0, routeUrl: routes.url, ...values }, routeActor);
  const children = [sipserverChild(args)];
  if (withGateway) children.push({ id: 'gw1', module: SIPGW, args: { sipserver: SIPSERVER_ID, tag: 'gw1' } });
  await system.start({ id: 'sip.supervisor', children });
  const server = system.ref<SipServerProtocol>(SIPSERVER_ID);
  const info = await server.request({ type: 'info' });
  return { system, port: info.udpPort, routes, server, gw: system.ref<SipGwProtocol>('gw1') };
}

export interface SippResult {
  code: number | null;
  stdout: string;
  stderr: string;
  successful: number;
  failed: number;
  errors: string;
}

/** The cumulative count of a row of sipp's final statistics screen. */
function statRow(out: string, name: string): number {
  const rows = [...out.matchAll(new RegExp(`${name}\\s*\\|\\s*(\\d+)\\s*\\|\\s*(\\d+)`, 'g'))];
  const last = rows.at(-1);
  return last ? Number(last[2]) : -1;
}

/** A port free for both UDP and TCP on loopback right now (sipp's own default is 5060 and up). */
export async function freePort(): Promise<number> {
  for (;;) {
    const u = dgram.createSocket('udp4');
    await new Promise<void>((r) => u.bind(0, '127.0.0.1', r));
    const port = u.address().port;
    const srv = net.createServer();
    const ok = await new Promise<boolean>((r) => {
      srv.once('error', () => r(false));
      srv.listen(port, '127.0.0.1', () => r(true));
    });
    await new Promise<void>((r) => (ok ? srv.close(() => r()) : r()));
    u.close();
    if (ok) return port;
  }
}

/** Run sipp in the foreground against 127.0.0.1:port from a free local port; killed in teardown if still running. */
export async function sipp(t: ExecutionContext, port: number, args: string[], timeoutMs = 60_000, localPort?: number): Promise<SippResult> {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-sipp-'));
  const local = localPort ?? (await freePort());
  const child: ChildProcess = spawn('sipp', [`127.0.0.1:${port}`, '-i', '127.0.0.1', '-p', String(local), '-timeout', '30s', '-timeout_error', '-trace_err', '-nostdin', ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((r) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    // 'close', not 'exit': the statistics screen may still be in the pipe when sipp exits.
    child.on('close', (c) => {
      clearTimeout(timer);
      r(c);
    });
  });
  let errors = '';
  try {
    for (const f of readdirSync(dir)) if (f.endsWith('_errors.log')) errors += readFileSync(join(dir, f), 'utf8');
  } catch {
    /* none */
  }
  return { code, stdout, stderr, successful: statRow(stdout, 'Successful call'), failed: statRow(stdout, 'Failed call'), errors };
}

/** A scenario from test/sip-scenarios, with `{{NAME}}` placeholders filled, in a temp file. */
export function scenario(t: ExecutionContext, name: string, vars: Record<string, string> = {}): string {
  let text = readFileSync(join(SCENARIOS, name), 'utf8');
  for (const [k, v] of Object.entries(vars)) text = text.replaceAll(`{{${k}}}`, v);
  const dir = mkdtempSync(join(tmpdir(), 'hostd-scn-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, name.replace(/\.tmpl$/, ''));
  writeFileSync(file, text);
  return file;
}

/**
 * Send raw bytes over UDP (`times` times, 50 ms apart, from one socket) and collect what comes
 * back within `ms`, or until `done(received)` says enough.
 */
export async function udpExchange(port: number, bytes: Buffer | string, ms = 500, times = 1, done?: (got: string[]) => boolean): Promise<string[]> {
  const s = dgram.createSocket('udp4');
  const got: string[] = [];
  s.on('message', (m) => got.push(m.toString('latin1')));
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  for (let i = 0; i < times; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 50));
    s.send(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes, port, '127.0.0.1');
  }
  const until = Date.now() + ms;
  while (Date.now() < until && !(done && done(got))) await new Promise((r) => setTimeout(r, 10));
  s.close();
  return got;
}

/** Send raw bytes over a TCP connection; what came back within `ms`, and whether the server closed it. */
export async function tcpExchange(port: number, bytes: Buffer | string, ms = 500): Promise<{ data: string; closed: boolean }> {
  const s = net.connect({ host: '127.0.0.1', port });
  let data = '';
  let closed = false;
  s.on('data', (d) => (data += d.toString('latin1')));
  s.on('close', () => (closed = true));
  s.on('error', () => undefined);
  await new Promise<void>((r) => s.once('connect', () => r()));
  s.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
  await new Promise((r) => setTimeout(r, ms));
  s.destroy();
  return { data, closed };
}

/** One series' value in Prometheus text (`name{labels}`), NaN when absent. */
export function metric(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line ? Number(line.slice(series.length + 1)) : NaN;
}
