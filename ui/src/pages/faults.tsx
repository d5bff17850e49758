/**
 * Faults: the bad slices the store knows of and their repair state (GET /$/faults); a loss that
 * will not come back can be accepted (POST /$/faults/accept-loss), which stops repair trying.
 */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Action, Badge, Empty, ErrorNotice, Section } from '../components.js';
import { when } from '../format.js';
import { usePoll } from '../poll.js';
import type { Fault } from '../types.js';

const REASONS: Record<string, string> = {
  'insufficient-slices': 'fewer good slices than needed: cannot be rebuilt',
  unrecoverable: 'the loss was accepted',
  'target-unwritable': 'no healthy volume can take the rebuilt slice',
  'reconstruction-mismatch': 'the rebuild did not reproduce the stored MD5; nothing was overwritten',
};

function Status({ f }: { f: Fault }) {
  if (f.repairStatus === 'blocked') return <Badge tone="bad">blocked</Badge>;
  if (f.repairStatus === 'repairing') return <Badge tone="info">repairing</Badge>;
  return <Badge tone="warn">{f.repairStatus}</Badge>;
}

export function Faults() {
  const { data, error, refresh } = usePoll(() => api.get<{ faults: Fault[] }>('/$/faults'));
  const [comment, setComment] = useState('');
  return (
    <div class="page">
      <ErrorNotice error={error} what="Refreshing the faults" />
      <Section title="Slice faults and repair">
        {!data ? (
          <Empty>Loading…</Empty>
        ) : data.faults.length === 0 ? (
          <Empty>No faults: every slice read or verified lately was good. Repaired faults leave this list.</Empty>
        ) : (
          <>
            <label class="inline">
              comment for an accepted loss <input name="comment" value={comment} maxLength={1024} onInput={(e) => setComment((e.target as HTMLInputElement).value)} />
            </label>
            <table class="list">
              <thead>
                <tr><th>object</th><th>slice</th><th>volume</th><th>code</th><th>repair</th><th>seen</th><th></th></tr>
              </thead>
              <tbody>
                {data.faults.map((f) => (
                  <tr key={`${f.objectId}.${f.sliceIndex}`} data-fault={`${f.objectId}.${f.sliceIndex}`}>
                    <td><code>{f.objectId}</code></td>
                    <td>{f.sliceIndex}</td>
                    <td><a href={`#/volumes/${f.volumeId}`}>{f.volumeId}</a></td>
                    <td title={f.message}><code>{f.code}</code></td>
                    <td>
                      <Status f={f} /> {f.repairBlockedReason && <span class="muted">{REASONS[f.repairBlockedReason] ?? f.repairBlockedReason}</span>}
                    </td>
                    <td class="muted">{f.count}× · last {when(f.lastSeenAt)}</td>
                    <td>
                      {f.repairBlockedReason !== 'unrecoverable' && (
                        <Action
                          label="Accept loss"
                          tone="danger"
                          confirm={`Accept the loss of slice ${f.sliceIndex} of ${f.objectId}? Repair stops trying to rebuild it.`}
                          run={() => api.post('/$/faults/accept-loss', { objectId: f.objectId, sliceIndex: f.sliceIndex, ...(comment ? { comment } : {}) })}
                          onDone={refresh}
                        />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </Section>
    </div>
  );
}
