/**
 * Provisioning: the machine's block devices (GET /$/blockDevices), which of them are volumes,
 * and `POST /$/volumes` for a free one. Provisioning destroys what the disk holds, so the
 * operator types the device's name to confirm, and the UI makes the `wipe` timestamp at that
 * moment (the store takes it only within 10 s of its clock: the spec's guard against a replay).
 */
import { useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { Action, Badge, Empty, ErrorNotice, Notice, Section } from '../components.js';
import { bytes } from '../format.js';
import { usePoll } from '../poll.js';
import type { BlockDevice, Volume } from '../types.js';

interface Devices {
  devices: BlockDevice[];
  volumes: Volume[];
}

async function load(): Promise<Devices> {
  const [d, v] = await Promise.all([api.get<{ blockDevices: BlockDevice[] }>('/$/blockDevices'), api.get<{ volumes: Volume[] }>('/$/volumes')]);
  return { devices: d.blockDevices, volumes: v.volumes };
}

/** Why a device cannot be provisioned as it is, or null when it can. */
function busyReason(d: BlockDevice, volume: Volume | undefined): string | null {
  if (volume) return `volume ${volume.id}`;
  const mounted = [d, ...d.children].flatMap((x) => x.mountpoints).filter(Boolean);
  if (mounted.length) return `mounted at ${mounted.join(', ')}`;
  if (d.type === 'rom') return 'optical drive';
  return null;
}

export function Provision() {
  const { data, error, refresh } = usePoll(load, [], 5000);
  const [chosen, setChosen] = useState<string | null>(null);
  return (
    <div class="page">
      <ErrorNotice error={error} what="Listing block devices" />
      <Section title="Block devices" aside={<Action label="Rescan" run={() => api.post('/$/blockDevices/reload')} what="Rescanning block devices" onDone={refresh} />}>
        {!data ? (
          <Empty>Loading…</Empty>
        ) : (
          <table class="list">
            <thead>
              <tr><th>device</th><th>size</th><th>type</th><th>model / serial</th><th>file system</th><th>in use</th><th></th></tr>
            </thead>
            <tbody>
              {data.devices.map((d) => {
                const volume = data.volumes.find((v) => v.device === d.path);
                const busy = busyReason(d, volume);
                return (
                  <tr key={d.path} data-device={d.path} class={chosen === d.path ? 'selected' : ''}>
                    <td><code>{d.path}</code></td>
                    <td>{bytes(d.size)}</td>
                    <td>{d.type}</td>
                    <td>{[d.model, d.serial].filter(Boolean).join(' · ') || <span class="muted">–</span>}</td>
                    <td>{d.fstype ? `${d.fstype}${d.label ? ` "${d.label}"` : ''}` : <span class="muted">none</span>}</td>
                    <td>{busy ? <Badge tone={volume ? 'ok' : 'muted'}>{busy}</Badge> : <Badge tone="info">free</Badge>}</td>
                    <td>{!busy && <button type="button" onClick={() => setChosen(d.path)}>Provision…</button>}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </Section>
      {chosen && data && <ProvisionForm device={data.devices.find((d) => d.path === chosen) ?? null} path={chosen} close={() => setChosen(null)} refresh={refresh} />}
    </div>
  );
}

function ProvisionForm({ device, path, close, refresh }: { device: BlockDevice | null; path: string; close: () => void; refresh: () => void }) {
  const name = path.replace(/^\/dev\//, '');
  const [typed, setTyped] = useState('');
  const [label, setLabel] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [made, setMade] = useState<Volume | null>(null);
  const go = async () => {
    setBusy(true);
    setError(null);
    try {
      // The wipe timestamp is made now, at the confirmation, never earlier.
      const body: Record<string, unknown> = { blockPath: path, wipe: Date.now() };
      if (label) body.label = label;
      const { volume } = await api.post<{ volume: Volume }>('/$/volumes', body);
      setMade(volume);
      refresh();
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, 'CLIENT', String(err)));
    } finally {
      setBusy(false);
    }
  };
  if (made) {
    return (
      <Section title={`Provisioned ${path}`}>
        <Notice tone="ok">
          {path} is now volume <a href={`#/volumes/${made.id}`}>{made.id}</a>. New objects use it at once; run a rebalance to move existing data onto it.
        </Notice>
        <button type="button" onClick={close}>Close</button>
      </Section>
    );
  }
  return (
    <Section title={`Provision ${path}`}>
      <Notice tone="bad">
        This <strong>destroys everything on {path}</strong>
        {device ? ` (${bytes(device.size)}${device.model ? `, ${device.model}` : ''})` : ''}: it is wiped, formatted as XFS and becomes a new volume.
      </Notice>
      <form class="edit" onSubmit={(e) => (e.preventDefault(), typed === name && !busy && void go())}>
        <div class="row">
          <label>
            label (optional) <input name="label" value={label} onInput={(e) => setLabel((e.target as HTMLInputElement).value)} />
          </label>
        </div>
        <div class="row">
          <label>
            type <code>{name}</code> to confirm <input name="confirm" autoComplete="off" value={typed} onInput={(e) => setTyped((e.target as HTMLInputElement).value)} />
          </label>
          <button type="submit" class="danger" disabled={typed !== name || busy}>
            {busy ? 'Provisioning…' : `Wipe and provision ${name}`}
          </button>
          <button type="button" onClick={close} disabled={busy}>Cancel</button>
        </div>
        <ErrorNotice error={error} what="Provisioning" />
      </form>
    </Section>
  );
}
