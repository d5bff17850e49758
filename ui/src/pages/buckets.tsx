/**
 * Buckets: each bucket's policy flags (PUT /$/buckets/{name}/policy) and its statistics (GET
 * /$/buckets/stats, cached by the store and expensive to recompute: polled slowly).
 */
import { useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { Empty, ErrorNotice, Section } from '../components.js';
import { bytes, count, when } from '../format.js';
import { usePoll } from '../poll.js';
import type { Bucket, BucketStats } from '../types.js';

const FLAGS = ['publicRead', 'publicWrite', 'deleteProtected'] as const;

export function Buckets() {
  const list = usePoll(() => api.get<{ buckets: Bucket[] }>('/$/buckets'));
  const stats = usePoll(() => api.get<BucketStats>('/$/buckets/stats'), [], 15_000);
  const [failed, setFailed] = useState<ApiError | null>(null);
  const byName = new Map((stats.data?.buckets ?? []).map((b) => [b.name, b]));
  return (
    <div class="page">
      <ErrorNotice error={list.error ?? stats.error} what="Refreshing the buckets" />
      <ErrorNotice error={failed} what="Setting the policy" />
      <Section title="Buckets" aside={stats.data && <span class="muted">statistics of {when(stats.data.takenAt)}</span>}>
        {!list.data ? (
          <Empty>Loading…</Empty>
        ) : list.data.buckets.length === 0 ? (
          <Empty>No buckets yet: a bucket is the first segment of an object's path.</Empty>
        ) : (
          <table class="list">
            <thead>
              <tr><th>bucket</th>{FLAGS.map((f) => <th key={f}>{f}</th>)}<th>objects</th><th>size</th></tr>
            </thead>
            <tbody>
              {list.data.buckets.map((b) => (
                <tr key={b.name} data-bucket={b.name}>
                  <td><code>{b.name}</code></td>
                  {FLAGS.map((f) => (
                    <td key={f}>
                      <input
                        type="checkbox"
                        name={f}
                        aria-label={`${b.name} ${f}`}
                        checked={b[f]}
                        onChange={(e) => {
                          setFailed(null);
                          api.put(`/$/buckets/${encodeURIComponent(b.name)}/policy`, { [f]: (e.target as HTMLInputElement).checked }).catch(setFailed).finally(list.refresh);
                        }}
                      />
                    </td>
                  ))}
                  <td>{byName.has(b.name) ? count(byName.get(b.name)!.objects) : '–'}</td>
                  <td>{byName.has(b.name) ? bytes(byName.get(b.name)!.logicalBytes) : '–'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
    </div>
  );
}
