/**
 * rtpengine as a relay under test, the way the peer recipe shared/peers/rtpengine/run.sh runs
 * it: Debian's rtpengine-daemon with `table = -1` (no kernel forwarding: every packet in
 * userspace), interface 127.0.0.1, default threads, a free ng port, started and stopped by
 * PID. Calls go through the ng protocol exactly as rtp-load.mjs sends them: `offer` with leg
 * A's SDP (SRTP leg A is translated to plain RTP with transport-protocol RTP/AVP), `answer`
 * with leg B's, and `delete` at the end, whose totals give rtpengine's received packet count.
 * If the binary is missing and we are root, it is installed with apt-get as run.sh does.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NgClient, type BDict } from './ng.js';
import { HOST, legSdp, parseRelaySdp } from './sdp.js';
import type { CallLegs, Relay, RelayRun } from './relay.js';
import { sleep } from './proc.js';

export const INSTALL_HINT = 'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends rtpengine-daemon';

function which(cmd: string): string | null {
  try {
    return execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** The rtpengine binary, installing the Debian package first when allowed and possible. */
export function ensureRtpengine(install: boolean): string {
  const found = which('rtpengine');
  if (found) return found;
  if (!install || process.getuid?.() !== 0) throw new Error(`rtpengine is not installed; as root: ${INSTALL_HINT}`);
  process.stderr.write('# installing rtpengine-daemon (apt-get)\n');
  execFileSync('sh', ['-c', INSTALL_HINT], { stdio: ['ignore', 'ignore', 'inherit'] });
  const now = which('rtpengine');
  if (!now) throw new Error('rtpengine is still missing after apt-get install');
  return now;
}

async function freeUdpPort(): Promise<number> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, HOST, () => r()));
  const p = s.address().port;
  s.close();
  return p;
}

class Rtpengine implements Relay {
  readonly srtp = true;
  readonly name = 'rtpengine';
  constructor(
    readonly pid: number,
    private readonly ngPort: number,
    private readonly version: string,
    private readonly child: ChildProcess | null,
    private readonly dir: string | null,
  ) {}

  describe(): string {
    let threads = '?';
    try {
      threads = String(fs.readdirSync(`/proc/${this.pid}/task`).length);
    } catch {
      /* gone */
    }
    return `rtpengine ${this.version} pid ${this.pid}, ${threads} threads, table=-1 (userspace), ng 127.0.0.1:${this.ngPort}`;
  }

  async begin(_calls: number, tag: string, concurrency: number): Promise<RelayRun> {
    const ng = new NgClient(HOST, this.ngPort);
    await ng.ready();
    const pong = await ng.req({ command: 'ping' });
    if (pong.result !== 'pong') throw new Error('rtpengine ng ping failed');
    const cids: Array<{ cid: string; i: number }> = [];
    return {
      async setup(i, portA, portB, keyA): Promise<CallLegs> {
        const cid = `c${i}-${tag}`;
        const off = await ng.req({
          command: 'offer', 'call-id': cid, 'from-tag': `fa${i}`, sdp: legSdp(portA, keyA ? keyA.toString('base64') : null),
          replace: ['origin', 'session-connection'], ICE: 'remove', ...(keyA ? { 'transport-protocol': 'RTP/AVP' } : {}),
        });
        if (off.result !== 'ok') throw new Error('offer failed: ' + JSON.stringify(off));
        cids.push({ cid, i });
        const os1 = parseRelaySdp(String(off.sdp));
        const ans = await ng.req({ command: 'answer', 'call-id': cid, 'from-tag': `fa${i}`, 'to-tag': `tb${i}`, sdp: legSdp(portB, null), replace: ['origin', 'session-connection'], ICE: 'remove' });
        if (ans.result !== 'ok') throw new Error('answer failed: ' + JSON.stringify(ans));
        const as = parseRelaySdp(String(ans.sdp));
        if (os1.addr !== HOST || as.addr !== HOST) throw new Error(`unexpected media address ${os1.addr} ${as.addr}`);
        if (keyA && !as.crypto) throw new Error('no a=crypto in the answer for leg A:\n' + String(ans.sdp));
        return { toA: as.port, toB: os1.port, rxKeyA: keyA ? Buffer.from(as.crypto!, 'base64') : null };
      },
      async finish() {
        let rx = 0;
        let j = 0;
        await Promise.all(
          Array.from({ length: Math.min(concurrency, cids.length) }, async () => {
            while (j < cids.length) {
              const c = cids[j++]!;
              try {
                const r = await ng.req({ command: 'delete', 'call-id': c.cid, 'from-tag': `fa${c.i}`, 'delete-delay': 0 });
                const totals = r.totals as BDict | undefined;
                rx += Number((totals?.RTP as BDict | undefined)?.packets ?? 0);
              } catch (e) {
                process.stderr.write(`# rtpengine delete: ${(e as Error).message}\n`);
              }
            }
          }),
        );
        ng.close();
        return { relayRxPkts: rx };
      },
    };
  }

  async stop(): Promise<void> {
    const c = this.child;
    if (c && c.exitCode === null && c.signalCode === null) {
      const exited = new Promise<void>((r) => c.once('exit', () => r()));
      c.kill('SIGTERM');
      const t = setTimeout(() => c.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    }
    if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Start our own rtpengine on a free ng port (stopped by stop(), by its PID). */
export async function startRtpengine(o: { install: boolean; portMin?: number; portMax?: number }): Promise<Relay> {
  const bin = ensureRtpengine(o.install);
  const v = spawnSync(bin, ['--version'], { encoding: 'utf8' }); // it prints to stderr
  const version = `${v.stdout}${v.stderr}`.trim().split('\n')[0]!.replace(/^Version:\s*/, '') || '?';
  const ngPort = await freeUdpPort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-rtpengine-'));
  const conf = path.join(dir, 'rtpengine.conf');
  fs.writeFileSync(
    conf,
    [
      '[rtpengine]',
      'table = -1',
      `interface = ${HOST}`,
      `listen-ng = ${HOST}:${ngPort}`,
      `port-min = ${o.portMin ?? 30000}`,
      `port-max = ${o.portMax ?? 40000}`,
      'timeout = 60',
      'delete-delay = 0',
      'log-level = 5',
      'log-stderr = true',
      'foreground = true',
      '',
    ].join('\n'),
  );
  const log = fs.openSync(path.join(dir, 'rtpengine.log'), 'w');
  const child = spawn(bin, [`--config-file=${conf}`], { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  const relay = new Rtpengine(child.pid!, ngPort, version, child, dir);
  // Ready when it answers an ng ping.
  const ng = new NgClient(HOST, ngPort);
  await ng.ready();
  try {
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`rtpengine exited ${child.exitCode}:\n${fs.readFileSync(path.join(dir, 'rtpengine.log'), 'utf8').slice(-2000)}`);
      const r = await ng.req({ command: 'ping' }, 1).catch(() => null);
      if (r?.result === 'pong') break;
      if (i > 10) throw new Error('rtpengine did not answer an ng ping within 10 s');
      await sleep(100);
    }
  } catch (e) {
    await relay.stop();
    throw e;
  } finally {
    ng.close();
  }
  return relay;
}

/** An rtpengine someone else runs: ng at host:port, CPU read from `pid`. */
export function externalRtpengine(ng: string, pid: number): Relay {
  const port = Number(ng.split(':')[1]);
  return new Rtpengine(pid, port, 'external', null, null);
}
