/**
 * Volumes: every volume with its flags, capacity, bus group, faults and drain progress; one
 * volume's detail (SMART from the single read, which runs smartctl) with its actions: drain and
 * cancel, identify, flags, label and comment, delete (the store refuses while live slices remain
 * and says how many), and encrypt where the server has it.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { Action, Badge, Empty, ErrorNotice, Meter, Notice, Section } from '../components.js';
import { bytes, count, duration, eta, percent, when } from '../format.js';
import { usePoll } from '../poll.js';
import type { Drain, SmartInfo, Volume, VolumeDetailView } from '../types.js';

interface Fleet {
  volumes: Volume[];
  drains: Map<number, Drain>;
}

/** The volumes, and the drain of each volume that is draining (GET /$/volumes/{id}/drain). */
export async function loadFleet(includeDeleted: boolean): Promise<Fleet> {
  const { volumes } = await api.get<{ volumes: Volume[] }>(`/$/volumes${includeDeleted ? '?includeDeleted=true' : ''}`);
  const drains = new Map<number, Drain>();
  await Promise.all(
    volumes
      .filter((v) => v.isDraining)
      .map(async (v) => {
        // One volume's drain that cannot be read leaves the others and the list shown.
        const got = await api.get<{ drain: Drain }>(`/$/volumes/${v.id}/drain`).catch(() => null);
        if (got) drains.set(v.id, got.drain);
      }),
  );
  return { volumes, drains };
}

export function Flags({ v }: { v: Volume }) {
  return (
    <span class="flags">
      {v.isDeleted && <Badge tone="muted">deleted</Badge>}
      {v.isMissing && <Badge tone="bad">missing</Badge>}
      {!v.isHealthy && <Badge tone="bad">unhealthy</Badge>}
      {v.isDraining && <Badge tone="info">draining</Badge>}
      {v.isReadOnly && <Badge tone="warn">read-only</Badge>}
      {!v.isEnabled && <Badge tone="muted">disabled</Badge>}
      {v.isEncrypted && <Badge tone="info">encrypted</Badge>}
      {v.isEnabled && !v.isReadOnly && v.isHealthy && !v.isDraining && !v.isDeleted && !v.isMissing && <Badge tone="ok">writable</Badge>}
    </span>
  );
}

export function DrainProgress({ d }: { d: Drain }) {
  const total = d.moved + d.remaining;
  const left = eta(d.moved, d.remaining, d.startedAt);
  return (
    <div class="drain" data-drain={d.volumeId} data-state={d.state}>
      <Meter value={d.state === 'completed' && d.remaining === 0 ? 100 : percent(d.moved, total)} label={`drain of volume ${d.volumeId}`} />
      <span class="muted">
        drain {d.state}
        {d.pausedBy ? ` (paused by ${d.pausedBy})` : ''}: {count(d.moved)} of {count(total)} slices moved ({bytes(d.bytesMoved)}), {count(d.remaining)} left
        {d.state === 'running' && left !== null ? `, ETA ${duration(left)}` : ''}
        {d.stuck.length ? `, ${d.stuck.length} stuck` : ''}
      </span>
    </div>
  );
}

export function Volumes({ selected }: { selected: number | null }) {
  const [includeDeleted, setIncludeDeleted] = useState(false);
  const { data, error, refresh } = usePoll(() => loadFleet(includeDeleted), [includeDeleted]);
  const chosen = data?.volumes.find((v) => v.id === selected) ?? null;
  return (
    <div class="page">
      <ErrorNotice error={error} what="Refreshing the volumes" />
      <Section
        title="Volumes"
        aside={
          <label class="inline">
            <input type="checkbox" checked={includeDeleted} onChange={(e) => setIncludeDeleted((e.target as HTMLInputElement).checked)} /> show deleted
          </label>
        }
      >
        {!data ? (
          <Empty>Loading…</Empty>
        ) : data.volumes.length === 0 ? (
          <Empty>No volumes yet. Provision a disk on the Provisioning page.</Empty>
        ) : (
          <table class="list">
            <thead>
              <tr>
                <th>id</th>
                <th>label</th>
                <th>device</th>
                <th>bus</th>
                <th>state</th>
                <th>capacity</th>
                <th>faults</th>
              </tr>
            </thead>
            <tbody>
              {data.volumes.map((v) => (
                <tr key={v.id} class={v.id === selected ? 'selected' : ''} data-volume={v.id}>
                  <td>
                    <a href={`#/volumes/${v.id}`}>{v.id}</a>
                  </td>
                  <td>{v.label || <span class="muted">–</span>}</td>
                  <td>
                    <code>{v.device ?? v.lastDevice ?? '–'}</code>
                  </td>
                  <td>{v.busGroup}</td>
                  <td>
                    <Flags v={v} />
                    {data.drains.get(v.id) && <DrainProgress d={data.drains.get(v.id)!} />}
                  </td>
                  <td class="capacity">
                    {v.bytesTotal !== null && v.bytesFree !== null ? (
                      <>
                        <Meter value={percent(v.bytesTotal - v.bytesFree, v.bytesTotal)} label={`volume ${v.id} used`} />
                        <span class="muted">
                          {bytes(v.bytesFree)} free of {bytes(v.bytesTotal)}
                        </span>
                      </>
                    ) : (
                      <span class="muted">–</span>
                    )}
                  </td>
                  <td>{v.faults ? <Badge tone="warn">{v.faults}</Badge> : 0}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
      {selected !== null && data && !chosen && <Notice tone="muted">There is no volume {selected} (deleted ones show with "show deleted").</Notice>}
      {chosen && <VolumeDetail key={chosen.id} v={chosen} drain={data?.drains.get(chosen.id) ?? null} refresh={refresh} />}
    </div>
  );
}

function VolumeDetail({ v, drain, refresh }: { v: Volume; drain: Drain | null; refresh: () => void }) {
  const smart = usePoll(() => api.get<{ volume: VolumeDetailView }>(`/$/volumes/${v.id}`), [v.id], 30_000);
  const info = smart.data?.volume.smartInfo;
  const path = `/$/volumes/${v.id}`;
  return (
    <Section title={`Volume ${v.id}${v.label ? ` · ${v.label}` : ''}`}>
      <div class="detail">
        <div>
          <table class="grid">
            <tbody>
              <tr><th>device</th><td><code>{v.device ?? '–'}</code> {v.lastDevice && v.lastDevice !== v.device && <span class="muted">(last seen as {v.lastDevice})</span>}</td></tr>
              <tr><th>bus group</th><td>{v.busGroup}</td></tr>
              <tr><th>flags</th><td><Flags v={v} /></td></tr>
              <tr><th>capacity</th><td>{bytes(v.bytesFree)} free of {bytes(v.bytesTotal)}</td></tr>
              <tr><th>faults</th><td>{v.faults}</td></tr>
              <tr><th>provisioned</th><td>{when(v.createdAt)}</td></tr>
              <tr><th>comment</th><td>{v.comment || <span class="muted">–</span>}</td></tr>
            </tbody>
          </table>
          {drain && <DrainProgress d={drain} />}
        </div>
        <div>
          <h3>SMART</h3>
          {!info ? (
            <ErrorNotice error={smart.error} what="Reading SMART" />
          ) : !info.available ? (
            <p class="muted">No SMART data: {info.reason}</p>
          ) : (
            <SmartTable info={info} />
          )}
        </div>
      </div>
      {!v.isDeleted && (
        <>
          <div class="actions">
            {v.isDraining ? (
              <Action label="Cancel drain" run={() => api.del(`${path}/drain`)} onDone={refresh} />
            ) : (
              <Action label="Drain" tone="primary" confirm={`Drain volume ${v.id}? It becomes read-only and every slice moves to other volumes.`} run={() => api.post(`${path}/drain`)} onDone={refresh} />
            )}
            <Identify id={v.id} />
            <Action
              label="Delete"
              tone="danger"
              confirm={`Delete volume ${v.id}? The store refuses while it still holds live slices (drain it first).`}
              run={() => api.del(path)}
              onDone={refresh}
            />
            <Encrypt v={v} refresh={refresh} />
          </div>
          <EditVolume v={v} refresh={refresh} />
        </>
      )}
    </Section>
  );
}

function SmartTable({ info }: { info: Extract<SmartInfo, { available: true }> }) {
  return (
    <>
      <p>
        {info.passed ? <Badge tone="ok">passed</Badge> : <Badge tone="bad">failed</Badge>} {info.model} {info.serial && <code>{info.serial}</code>}
        {info.temperatureC != null && ` · ${info.temperatureC} °C`}
        {info.powerOnHours != null && ` · ${count(info.powerOnHours)} h powered on`}
      </p>
      {info.attributes && info.attributes.length > 0 && (
        <table class="list compact">
          <thead>
            <tr><th>id</th><th>attribute</th><th>value</th><th>worst</th><th>threshold</th><th>raw</th></tr>
          </thead>
          <tbody>
            {info.attributes.map((a) => (
              <tr key={a.id}><td>{a.id}</td><td>{a.name}</td><td>{a.value}</td><td>{a.worst}</td><td>{a.thresh}</td><td>{a.raw}</td></tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/**
 * Identify flashes the drive's LED while it is re-POSTed (the spec: about once a second, the
 * server stops about 3 s after the last one). A 501 turns the button into a plain "not available".
 */
function Identify({ id }: { id: number }) {
  const [on, setOn] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const timer = useRef<ReturnType<typeof setInterval> | null>(null);
  const stop = () => {
    if (timer.current) clearInterval(timer.current);
    timer.current = null;
    setOn(false);
  };
  const post = () =>
    api.post(`/$/volumes/${id}/identify`).catch((err: ApiError) => {
      setError(err);
      stop();
    });
  useEffect(() => () => stop(), []);
  if (error?.notAvailable) return <Notice tone="muted">Identify (LED) is not available in this version of the store.</Notice>;
  const toggle = () => {
    setError(null);
    if (on) {
      stop();
      api.del(`/$/volumes/${id}/identify`).catch((err: ApiError) => setError(err));
      return;
    }
    setOn(true);
    void post();
    timer.current = setInterval(post, 1000);
  };
  return (
    <span class="action">
      <button type="button" aria-pressed={on} onClick={toggle}>{on ? 'Stop identify' : 'Identify'}</button>
      <ErrorNotice error={error} what="Identify" />
    </span>
  );
}

/**
 * Encryption in place is the middle step of drain → encrypt → rebalance, so the button shows on
 * a drained (read-only, not draining) volume that says it is not encrypted. A server without
 * the endpoint answers 501: the button gives way to "not available".
 */
function Encrypt({ v, refresh }: { v: Volume; refresh: () => void }) {
  const [missing, setMissing] = useState(false);
  if (v.isEncrypted !== false || !v.isReadOnly || v.isDraining) return null;
  if (missing) return <Notice tone="muted">Encryption is not available in this version of the store.</Notice>;
  return (
    <Action
      label="Encrypt"
      confirm={`Encrypt volume ${v.id} in place? It must be drained; rebalance afterwards to move data back.`}
      run={() =>
        api.post(`/$/volumes/${v.id}/encrypt`).catch((err: ApiError) => {
          if (err.notAvailable) setMissing(true);
          else throw err;
        })
      }
      onDone={refresh}
    />
  );
}

const FLAGS = ['isEnabled', 'isReadOnly', 'isHealthy'] as const;
type Editable = Pick<Volume, 'label' | 'comment' | (typeof FLAGS)[number]>;

const editable = (v: Editable): Editable => ({ label: v.label, comment: v.comment, isEnabled: v.isEnabled, isReadOnly: v.isReadOnly, isHealthy: v.isHealthy });

/**
 * The form sends only what the operator changed against the values it showed (`base`), so a
 * change made meanwhile elsewhere is not reverted; while nothing is changed it follows the volume.
 */
function EditVolume({ v, refresh }: { v: Volume; refresh: () => void }) {
  const [base, setBase] = useState(() => editable(v));
  const [form, setForm] = useState(() => editable(v));
  const [saved, setSaved] = useState(false);
  const changes: Partial<Editable> = {};
  for (const k of Object.keys(form) as Array<keyof Editable>) if (form[k] !== base[k]) Object.assign(changes, { [k]: form[k] });
  const dirty = Object.keys(changes).length > 0;
  const current = editable(v);
  useEffect(() => {
    if (dirty) return;
    setBase(current);
    setForm(current);
  }, [JSON.stringify(current)]);
  const set = (change: Partial<Editable>) => setForm({ ...form, ...change });
  return (
    <form class="edit" onSubmit={(e) => e.preventDefault()}>
      <h3>Flags, label and comment</h3>
      <div class="row">
        {FLAGS.map((f) => (
          <label class="inline" key={f}>
            <input type="checkbox" name={f} checked={form[f]} onChange={(e) => set({ [f]: (e.target as HTMLInputElement).checked })} /> {f.slice(2)}
          </label>
        ))}
      </div>
      <div class="row">
        <label>
          label <input name="label" value={form.label} maxLength={1024} onInput={(e) => set({ label: (e.target as HTMLInputElement).value })} />
        </label>
        <label>
          comment <input name="comment" value={form.comment} maxLength={1024} onInput={(e) => set({ comment: (e.target as HTMLInputElement).value })} />
        </label>
        <Action
          label="Save"
          tone="primary"
          disabled={!dirty}
          run={async () => {
            await api.put(`/$/volumes/${v.id}`, changes);
            setBase({ ...base, ...changes });
            setSaved(true);
          }}
          onDone={refresh}
        />
        {saved && !dirty && <span class="muted">saved</span>}
      </div>
    </form>
  );
}
