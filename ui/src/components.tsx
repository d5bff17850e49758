/** The small parts every page uses: a meter, flag badges, notices, an action button. */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from './api.js';

export function Meter({ value, label }: { value: number; label?: string }) {
  const v = Math.round(value * 10) / 10;
  return (
    <div class="meter" role="progressbar" aria-valuenow={v} aria-valuemin={0} aria-valuemax={100} aria-label={label}>
      <div class="meter-fill" style={{ width: `${v}%` }} />
    </div>
  );
}

export type Tone = 'ok' | 'warn' | 'bad' | 'muted' | 'info';

export function Badge({ tone, children }: { tone: Tone; children: ComponentChildren }) {
  return <span class={`badge ${tone}`}>{children}</span>;
}

export function Notice({ tone, children }: { tone: Tone; children: ComponentChildren }) {
  return <div class={`notice ${tone}`} role={tone === 'bad' ? 'alert' : 'status'}>{children}</div>;
}

/** An error from the API, said plainly: 501 is "not in this version", not a failure. */
export function ErrorNotice({ error, what }: { error: ApiError | null; what?: string }) {
  if (!error) return null;
  if (error.notAvailable) return <Notice tone="muted">{what ?? 'This'} is not available in this version of the store.</Notice>;
  return (
    <Notice tone="bad">
      {what ? `${what}: ` : ''}
      {error.message} <code>{error.code}</code>
    </Notice>
  );
}

/**
 * A button that runs an API action, shows that it is busy, and reports the outcome beside it.
 * `confirm` asks first (window.confirm) for actions that are hard to undo.
 */
export function Action({ label, run, confirm, tone, disabled, what, onDone }: {
  label: string;
  run: () => Promise<unknown>;
  confirm?: string;
  tone?: 'danger' | 'primary';
  disabled?: boolean;
  what?: string;
  onDone?: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const click = async () => {
    if (confirm && !window.confirm(confirm)) return;
    setBusy(true);
    setError(null);
    try {
      await run();
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, 'CLIENT', String(err)));
    } finally {
      setBusy(false);
      onDone?.();
    }
  };
  return (
    <span class="action">
      <button type="button" class={tone ?? ''} disabled={busy || disabled} onClick={click}>
        {busy ? `${label}…` : label}
      </button>
      <ErrorNotice error={error} what={what ?? label} />
    </span>
  );
}

export function Section({ title, children, aside }: { title: string; children: ComponentChildren; aside?: ComponentChildren }) {
  return (
    <section>
      <header class="section-head">
        <h2>{title}</h2>
        {aside}
      </header>
      {children}
    </section>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}
