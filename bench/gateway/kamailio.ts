/**
 * Kamailio (Debian `kamailio`) as the peer of the gateway bench: a transaction-stateful proxy
 * (tm's t_relay, record-routed) that sends every new INVITE to a sipp `uas`. In-dialog requests
 * from sipp's built-in uac carry no Route header, so they are sent to the same far end: the ACK
 * of a 2xx statelessly (as RFC 3261 has it), the BYE through a transaction. An OPTIONS it
 * answers itself (the readiness probe).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSocket } from 'node:dgram';

const MODULES = '/usr/lib/x86_64-linux-gnu/kamailio/modules/';

export function kamailioConfig(listenPort: number, uasPort: number, children: number): string {
  return `#!KAMAILIO
debug=0
log_stderror=yes
memdbg=5
memlog=5
children=${children}
auto_aliases=no
listen=udp:127.0.0.1:${listenPort}
mpath="${MODULES}"
loadmodule "tm.so"
loadmodule "sl.so"
loadmodule "rr.so"
loadmodule "maxfwd.so"
loadmodule "pv.so"
loadmodule "siputils.so"
loadmodule "textops.so"

request_route {
  if (!mf_process_maxfwd_header("10")) { sl_send_reply("483", "Too Many Hops"); exit; }
  if (is_method("OPTIONS") && !has_totag()) { sl_send_reply("200", "OK"); exit; }
  $du = "sip:127.0.0.1:${uasPort}";
  if (has_totag()) {
    if (is_method("ACK")) { forward(); exit; }
    t_relay();
    exit;
  }
  if (is_method("CANCEL")) { if (t_check_trans()) t_relay(); exit; }
  if (is_method("INVITE")) record_route();
  if (!t_relay()) sl_reply_error();
}
`;
}

/** Start Kamailio in the foreground; resolves once it answers an OPTIONS on its port. */
export async function startKamailio(listenPort: number, uasPort: number, children = 2): Promise<{ stop(): Promise<void>; child: ChildProcess }> {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-bench-kam-'));
  const cfg = join(dir, 'kamailio.cfg');
  writeFileSync(cfg, kamailioConfig(listenPort, uasPort, children));
  const child = spawn('kamailio', ['-f', cfg, '-DD', '-E', '-Y', dir, '-P', join(dir, 'pid'), '-m', '256', '-M', '32'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const done = new Promise((r) => child.once('close', r));
      // Kamailio's worker processes share its process group: signal the group.
      process.kill(-child.pid!, 'SIGTERM');
      const t = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 3000);
      await done;
      clearTimeout(t);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await answersOptions(listenPort))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`kamailio did not start (exit ${child.exitCode}): ${err.trim()}`);
    }
  }
  return { child, stop };
}

/** True when something answers a SIP OPTIONS on 127.0.0.1:port within 300 ms (any status). */
export async function answersOptions(port: number): Promise<boolean> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  const local = s.address().port;
  const branch = `z9hG4bK${Math.random().toString(36).slice(2)}`;
  const msg = [
    `OPTIONS sip:127.0.0.1:${port} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=${branch};rport`,
    'Max-Forwards: 70',
    `From: <sip:probe@127.0.0.1:${local}>;tag=p${local}`,
    `To: <sip:127.0.0.1:${port}>`,
    `Call-ID: probe-${branch}`,
    'CSeq: 1 OPTIONS',
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
  try {
    return await new Promise<boolean>((resolve) => {
      const t = setTimeout(() => resolve(false), 300);
      s.on('message', (m) => {
        if (/^SIP\/2\.0 \d{3}/.test(m.toString('latin1'))) {
          clearTimeout(t);
          resolve(true);
        }
      });
      s.send(msg, port, '127.0.0.1');
    });
  } finally {
    s.close();
  }
}
