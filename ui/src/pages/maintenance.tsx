/**
 * Maintenance: the freeze switch, running drains, the rebalance (start, retune, cancel; progress
 * with the server's ETA), verification runs (start, stop, progress) and their history.
 */
import { useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { Action, Badge, Empty, ErrorNotice, Meter, Notice, Section } from '../components.js';
import { bytes, count, duration, eta, percent, when } from '../format.js';
import { usePoll } from '../poll.js';
import type { Rebalance, VerifyRun, VerifyState } from '../types.js';
import { DrainProgress, loadFleet } from './volumes.js';

interface State {
  frozen: boolean;
  rebalance: Rebalance;
  verify: VerifyState;
  runs: VerifyRun[];
}

async function load(): Promise<State> {
  const [freeze, rebalance, verify, runs] = await Promise.all([
    api.get<{ frozen: boolean }>('/$/maintenance-freeze'),
    api.get<Rebalance>('/$/rebalance'),
    api.get<VerifyState>('/$/verify-volumes'),
    api.get<{ runs: VerifyRun[] }>('/$/verify-runs?limit=20'),
  ]);
  return { frozen: freeze.frozen, rebalance, verify, runs: runs.runs };
}

export function Maintenance() {
  const { data, error, refresh } = usePoll(load);
  const fleet = usePoll(() => loadFleet(false));
  const [failed, setFailed] = useState<ApiError | null>(null);
  if (!data) return <ErrorNotice error={error} what="Loading maintenance" />;
  const drains = [...(fleet.data?.drains.values() ?? [])];
  return (
    <div class="page">
      <ErrorNotice error={error ?? fleet.error} what="Refreshing" />
      <Section title="Maintenance freeze">
        <div class="row">
          <label class="switch">
            <input
              type="checkbox"
              name="frozen"
              role="switch"
              checked={data.frozen}
              onChange={(e) => {
                const frozen = (e.target as HTMLInputElement).checked;
                setFailed(null);
                api.put('/$/maintenance-freeze', { frozen }).catch(setFailed).finally(refresh);
              }}
            />{' '}
            {data.frozen ? <Badge tone="warn">frozen</Badge> : <Badge tone="ok">running</Badge>}
          </label>
          <span class="muted">
            {data.frozen
              ? 'Drains, verification, repair and rebalance wait. Unfreezing resumes drains first, then scrub and repair, then the rebalance.'
              : 'Background maintenance runs. Freezing stops drains, verification, repair and rebalance before their next batch; reads and writes go on.'}
          </span>
        </div>
        <ErrorNotice error={failed} what="Setting the freeze" />
      </Section>
      <Section title="Drains">
        {drains.length === 0 ? <Empty>No volume is draining. Start a drain from a volume's page.</Empty> : drains.map((d) => (
          <div key={d.volumeId} class="row">
            <a href={`#/volumes/${d.volumeId}`}>volume {d.volumeId}</a>
            <DrainProgress d={d} />
          </div>
        ))}
      </Section>
      <RebalancePanel r={data.rebalance} refresh={refresh} />
      <VerifyPanel v={data.verify} runs={data.runs} refresh={refresh} />
    </div>
  );
}

function num(form: HTMLFormElement, name: string): number | undefined {
  const raw = (form.elements.namedItem(name) as HTMLInputElement | null)?.value.trim();
  return raw ? Number(raw) : undefined;
}

function RebalancePanel({ r, refresh }: { r: Rebalance; refresh: () => void }) {
  const [form, setForm] = useState<HTMLFormElement | null>(null);
  const total = r.bytesMoved + r.bytesToMove;
  return (
    <Section title="Rebalance">
      {r.running ? (
        <>
          <Meter value={percent(r.bytesMoved, total)} label="rebalance" />
          <p>
            {bytes(r.bytesMoved)} of {bytes(total)} moved at {bytes(r.bytesPerSec)}/s, ETA {duration(r.etaSeconds)} · {count(r.moves)} moves · target fill {(r.targetFill * 100).toFixed(1)}% ± {(r.deadband * 100).toFixed(1)}%
            {r.pausedBy ? ` · paused by ${r.pausedBy}` : ''}
          </p>
          <form class="row" ref={setForm} onSubmit={(e) => e.preventDefault()}>
            <label>
              concurrency <input name="concurrency" type="number" min={1} max={64} placeholder={String(r.concurrency)} />
            </label>
            <Action label="Retune" run={() => api.put('/$/rebalance', { concurrency: form ? num(form, 'concurrency') : undefined })} onDone={refresh} />
            <Action label="Cancel rebalance" run={() => api.del('/$/rebalance')} onDone={refresh} />
          </form>
        </>
      ) : (
        <form class="row" ref={setForm} onSubmit={(e) => e.preventDefault()}>
          <span class="muted">Idle{r.startedAt ? `; the last one started ${when(r.startedAt)}` : ''}.</span>
          <label>
            deadband <input name="deadband" type="number" step="0.01" min={0} max={0.5} placeholder="0.05" />
          </label>
          <label>
            concurrency <input name="concurrency" type="number" min={1} max={64} placeholder="2" />
          </label>
          <label>
            max moves <input name="maxMoves" type="number" min={1} placeholder="no limit" />
          </label>
          <Action
            label="Start rebalance"
            tone="primary"
            run={() => {
              const body: Record<string, number> = {};
              for (const k of ['deadband', 'concurrency', 'maxMoves']) {
                const n = form ? num(form, k) : undefined;
                if (n !== undefined) body[k] = n;
              }
              return api.post('/$/rebalance', body);
            }}
            onDone={refresh}
          />
        </form>
      )}
    </Section>
  );
}

function errorsOf(run: VerifyRun): number {
  return Object.values(run.errors).reduce((a, b) => a + b, 0);
}

function VerifyPanel({ v, runs, refresh }: { v: VerifyState; runs: VerifyRun[]; refresh: () => void }) {
  const [mode, setMode] = useState<'full' | 'light'>('full');
  const [answer, setAnswer] = useState<string | null>(null);
  const run = v.run;
  // A deferred or parked run is 'running' too (it waits): shown with what it waits for.
  const going = run !== null && run.status === 'running';
  const left = run && going ? eta(run.objectsChecked, v.objectsTotal - run.objectsChecked, run.startedAt) : null;
  return (
    <Section title="Verification (scrub)">
      {going && run ? (
        <>
          <Meter value={v.percent} label="verification" />
          <p>
            {run.mode} run <code>{run.id}</code> ({run.volumeIds ? `volumes ${run.volumeIds.join(', ')}` : 'whole fleet'}): {count(run.objectsChecked)} of {count(v.objectsTotal)} objects, {v.percent}%
            {left !== null ? `, ETA ${duration(left)}` : ''}, {errorsOf(run)} bad slices
            {v.waitingOnRebalance ? ' · waiting for the rebalance' : ''}
            {v.frozen ? ' · held by the freeze' : ''}
          </p>
          <Action label="Stop verification" run={() => api.del('/$/verify-volumes')} onDone={refresh} />
        </>
      ) : (
        <div class="row">
          <label>
            mode{' '}
            <select name="mode" value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value as 'full' | 'light')}>
              <option value="full">full (every byte, parity)</option>
              <option value="light">light (headers)</option>
            </select>
          </label>
          <Action
            label="Verify the fleet"
            tone="primary"
            run={async () => {
              const a = await api.post<{ accepted: boolean; deferred?: boolean; reason?: string }>('/$/verify-volumes', { mode });
              setAnswer(a.accepted ? (a.deferred ? 'Accepted: it starts when the rebalance ends.' : 'Started.') : `Not started: ${a.reason ?? 'refused'}`);
            }}
            onDone={refresh}
          />
        </div>
      )}
      {answer && <Notice tone="info">{answer}</Notice>}
      <h3>History</h3>
      {runs.length === 0 ? (
        <Empty>No verification has run yet.</Empty>
      ) : (
        <table class="list">
          <thead>
            <tr><th>run</th><th>trigger</th><th>mode</th><th>scope</th><th>status</th><th>requested</th><th>finished</th><th>objects</th><th>bad slices</th></tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.id} data-run={r.id}>
                <td><code>{r.id}</code></td>
                <td title={r.trigger.kind === 'fault' ? r.trigger.detail : undefined}>{r.trigger.kind === 'fault' ? `fault (${r.trigger.signal}, ${r.trigger.device})` : r.trigger.kind}</td>
                <td>{r.mode}</td>
                <td>{r.volumeIds ? r.volumeIds.join(', ') : 'all'}</td>
                <td>
                  <Badge tone={r.status === 'completed' ? 'ok' : r.status === 'running' ? 'info' : 'muted'}>{r.status}</Badge>
                  {r.stopReason && <span class="muted"> {r.stopReason}</span>}
                </td>
                <td>{when(r.requestedAt)}</td>
                <td>{when(r.finishedAt)}</td>
                <td>{count(r.objectsChecked)}</td>
                <td>{errorsOf(r) ? <Badge tone="bad">{errorsOf(r)}</Badge> : 0}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}
