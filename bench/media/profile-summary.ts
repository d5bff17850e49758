/**
 * Summarise V8 .cpuprofile files of the bridge process (serve.js run with
 * --hostd-node-args="--cpu-prof --cpu-prof-dir=DIR") into per-packet cost buckets:
 *
 *   node dist/bench/media/profile-summary.js [--pps 20000] [--us-per-pkt 50] DIR/*.cpuprofile
 *
 * Threads that spent less than 1 s busy (main, front, pool) are skipped. Each sample goes to
 * the first bucket whose rule matches its stack (leaf first), e.g. the send syscall, the
 * address lookup + nextTick deferral of an unconnected dgram send, SRTP HMAC / AES, per-packet
 * prom-client work, AsyncLocalStorage hooks; setup (commands, module loading) is left out.
 * With --us-per-pkt (the bench's measured relay µs per packet, taken without the profiler),
 * each bucket's share of the media threads' busy time is also shown in µs per packet.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';

interface Frame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface Node {
  id: number;
  callFrame: Frame;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

type Rule = [bucket: string, test: (names: string[], leaf: string) => boolean];
const has = (names: string[], ...fns: string[]) => fns.some((f) => names.includes(f));
const RULES: Rule[] = [
  ['(idle)', (_n, leaf) => leaf === '(idle)' || leaf === 'atomicsWaitLoop'],
  ['setup: commands, SDP, module loading', (n) => has(n, 'command', 'evaluate', 'compileForInternalLoader', 'require', 'handle', 'init')],
  ['GC', (_n, leaf) => leaf === '(garbage collector)'],
  ['SRTP HMAC-SHA1 (createHmac per packet)', (n) => has(n, 'mac')],
  ['SRTP AES-CM (ECB keystream + JS xor)', (n) => has(n, 'crypt')],
  ['SRTP other (replay, ROC, copies)', (n) => has(n, 'protectRtp', 'unprotectRtp')],
  ['prom-client counter per packet', (n) => has(n, 'countPacket')],
  ['async_hooks (AsyncLocalStorage init hooks)', (_n, leaf) => ['emitInitNative', 'emitInitScript', '_propagate', 'lookupPublicResource', 'promiseInitHook', 'init', 'emitInit', 'executionAsyncResource', 'defaultTriggerAsyncIdScope'].includes(leaf)],
  ['dgram send: sendmsg syscall + libuv (doSend self)', (_n, leaf) => leaf === 'doSend'],
  ['dgram send: address lookup + nextTick deferral (unconnected socket)', (n) => has(n, 'afterDns', 'lookup', 'lookup4', 'nextTick', 'isIPv4', 'isIP') || (n[0] === 'processTicksAndRejections')],
  ['dgram send: JS (Socket.send, SocketPair.send, transmit)', (n) => has(n, 'transmit', 'Socket.send')],
  ['sendRtp: header, Buffer.concat, counters', (n) => has(n, 'sendRtp')],
  ['media(): routing, stampForwarded', (n) => has(n, 'media')],
  ['receive(): policy, parseRtp, stats, Date.now', (n) => has(n, 'receive')],
  ['dgram receive dispatch (onMessage, emit, rinfo)', (n) => has(n, 'onMessage')],
  ['send-completion callbacks', (n) => has(n, 'callbackTrampoline')],
  ['native: libuv loop, recvmsg, epoll ("program")', (_n, leaf) => leaf === '(program)'],
  ['runtime: timers, messages, other', () => true],
];

const { values, positionals } = parseArgs({ options: { 'us-per-pkt': { type: 'string' } }, allowPositionals: true });
const usPerPkt = values['us-per-pkt'] ? Number(values['us-per-pkt']) : null;
const total = new Map<string, number>();
let busyAll = 0;
for (const file of positionals) {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const bucketOf = new Map<number, string>();
  const local = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const id = p.samples[i]!;
    let b = bucketOf.get(id);
    if (b === undefined) {
      const names: string[] = [];
      for (let c: number | undefined = id; c !== undefined; c = parent.get(c)) {
        const f = byId.get(c)!.callFrame;
        names.push(f.functionName || '(anon)');
      }
      const leaf = names[0]!;
      b = RULES.find(([, t]) => t(names.slice(0, -1), leaf))![0];
      bucketOf.set(id, b);
    }
    local.set(b, (local.get(b) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  let busy = 0;
  for (const [b, us] of local) if (b !== '(idle)' && !b.startsWith('setup')) busy += us;
  console.log(`${file.split('/').pop()}: per-packet busy ${(busy / 1e6).toFixed(2)} s${busy < 1e6 ? ' (skipped)' : ''}`);
  if (busy < 1e6) continue;
  busyAll += busy;
  for (const [b, us] of local) total.set(b, (total.get(b) ?? 0) + us);
}
console.log('');
const rows = [...total].filter(([b]) => b !== '(idle)' && !b.startsWith('setup')).sort((a, b) => b[1] - a[1]);
for (const [b, us] of rows) {
  const share = us / busyAll;
  console.log(`${(share * 100).toFixed(1).padStart(5)} %${usPerPkt ? `  ${(share * usPerPkt).toFixed(1).padStart(5)} µs/pkt` : ''}  ${b}`);
}
