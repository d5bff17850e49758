/** Overview: capacity, objects, volume health, outstanding faults, and what maintenance is doing. */
import { api } from '../api.js';
import { Badge, ErrorNotice, Meter, Notice, Section } from '../components.js';
import { bytes, count, duration, percent } from '../format.js';
import { usePoll } from '../poll.js';
import type { Fault, Rebalance, Status, VerifyState } from '../types.js';

interface Summary {
  status: Status;
  faults: Fault[];
  frozen: boolean;
  rebalance: Rebalance;
  verify: VerifyState;
}

async function load(): Promise<Summary> {
  const [status, faults, freeze, rebalance, verify] = await Promise.all([
    api.get<Status>('/$/status'),
    api.get<{ faults: Fault[] }>('/$/faults'),
    api.get<{ frozen: boolean }>('/$/maintenance-freeze'),
    api.get<Rebalance>('/$/rebalance'),
    api.get<VerifyState>('/$/verify-volumes'),
  ]);
  return { status, faults: faults.faults, frozen: freeze.frozen, rebalance, verify };
}

export function Overview() {
  const { data, error } = usePoll(load);
  if (!data) return <ErrorNotice error={error} what="Loading the overview" />;
  const { status, faults, frozen, rebalance, verify } = data;
  const v = status.volumes;
  const used = status.gbCapacity - status.gbFree;
  const blocked = faults.filter((f) => f.repairStatus === 'blocked').length;
  const healthy = v.unhealthy.length === 0 && v.missing.length === 0 && blocked === 0;
  return (
    <div class="page">
      <ErrorNotice error={error} what="Refreshing" />
      {frozen && <Notice tone="warn">Maintenance is frozen: drains, verification, repair and rebalance wait. Reads and writes go on.</Notice>}
      <div class="cards">
        <div class="card">
          <h3>Capacity</h3>
          <p class="big">{bytes(used * 1e9)} <small>of {bytes(status.gbCapacity * 1e9)} used</small></p>
          <Meter value={percent(used, status.gbCapacity)} label="capacity used" />
          <p class="muted">{bytes(status.gbFree * 1e9)} free on present volumes</p>
        </div>
        <div class="card">
          <h3>Objects</h3>
          <p class="big">{count(status.objects)}</p>
          <p class="muted">{bytes(status.gbStored * 1e9)} stored (before parity)</p>
        </div>
        <div class="card">
          <h3>Health</h3>
          <p class="big">{healthy ? <Badge tone="ok">healthy</Badge> : <Badge tone="bad">attention</Badge>}</p>
          <p class="muted">
            {v.writable.length} writable · {v.readOnly.length} read-only · {v.unhealthy.length} unhealthy · {v.missing.length} missing
          </p>
        </div>
        <div class="card">
          <h3>Faults</h3>
          <p class="big">{count(faults.length)}</p>
          <p class="muted">{faults.length === 0 ? 'no bad slices' : `${blocked} blocked, ${faults.length - blocked} pending or repairing`}</p>
        </div>
      </div>
      <Section title="Volumes by state">
        <table class="grid">
          <tbody>
            {(Object.keys(v) as Array<keyof Status['volumes']>).map((k) => (
              <tr key={k}>
                <th>{k}</th>
                <td>{v[k].length ? v[k].join(', ') : <span class="muted">none</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Maintenance">
        <ul class="plain">
          <li>
            Rebalance: {rebalance.running ? `running, ${bytes(rebalance.bytesMoved)} of ${bytes(rebalance.bytesToMove + rebalance.bytesMoved)} moved, ETA ${duration(rebalance.etaSeconds)}` : 'idle'}
          </li>
          <li>
            Verification: {verify.run ? `${verify.run.status}${verify.waitingOnRebalance ? ' (waiting for the rebalance)' : ''}, ${verify.percent}% of ${count(verify.objectsTotal)} objects` : 'no run'}
          </li>
          <li>Draining volumes: {v.draining.length ? v.draining.join(', ') : 'none'}</li>
        </ul>
      </Section>
    </div>
  );
}
