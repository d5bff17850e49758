/**
 * Summarise the .cpuprofile files of a profiled gateway bench run (one per thread of the
 * daemon: `--hostd-node-args="--cpu-prof --cpu-prof-dir=DIR"`): per thread its busy time, the
 * functions with the most self time, and the inclusive time of the functions named with
 * --inclusive (a comma list), so a change can be judged by where the SIP path's time goes.
 *
 *   node dist/bench/gateway/profile-top.js [--top 25] [--inclusive onMessage,route] DIR/*.cpuprofile
 *
 * Threads under 0.5 s busy are skipped (idle pools, the metrics thread).
 */
import fs from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '25' }, inclusive: { type: 'string', default: '' } }, allowPositionals: true });
const top = Number(values.top);
const named = values.inclusive!.split(',').filter(Boolean);
const IDLE = new Set(['(idle)', 'atomicsWaitLoop']);

const label = (n: Node) => {
  const f = n.callFrame;
  const file = f.url ? f.url.replace(/^.*\/(dist|node_modules)\//, '$1/').replace(/^node:/, '') : '';
  return `${f.functionName || '(anon)'}${file ? ` ${file}:${f.lineNumber + 1}` : ''}`;
};

for (const file of positionals) {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  let busy = 0;
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = (p.timeDeltas[i] ?? 0) / 1000;
    const n = byId.get(p.samples[i]!)!;
    total += dt;
    if (IDLE.has(n.callFrame.functionName)) continue;
    busy += dt;
    self.set(label(n), (self.get(label(n)) ?? 0) + dt);
    if (named.length) {
      const seen = new Set<string>();
      for (let c: number | undefined = n.id; c !== undefined; c = parent.get(c)) {
        const name = byId.get(c)!.callFrame.functionName;
        if (named.includes(name) && !seen.has(name)) {
          seen.add(name);
          incl.set(name, (incl.get(name) ?? 0) + dt);
        }
      }
    }
  }
  if (busy < 500) continue;
  console.log(`\n${basename(file)}: busy ${busy.toFixed(0)} ms of ${total.toFixed(0)} ms (${((100 * busy) / total).toFixed(0)} %)`);
  for (const [name, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${ms.toFixed(0).padStart(7)} ms ${((100 * ms) / busy).toFixed(1).padStart(5)} %  ${name}`);
  if (named.length) {
    console.log('  inclusive:');
    for (const name of named) console.log(`  ${(incl.get(name) ?? 0).toFixed(0).padStart(7)} ms ${((100 * (incl.get(name) ?? 0)) / busy).toFixed(1).padStart(5)} %  ${name}`);
  }
}
