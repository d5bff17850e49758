/**
 * Live updates: the management API has no event stream (spec: "The HTTP API emits no events"),
 * so a page polls what it shows, every POLL_MS while the tab is visible, and at once after an
 * action (refresh). A failed poll keeps the last good value and reports the error beside it.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

export const POLL_MS = 1500;

export interface Polled<T> {
  data: T | null;
  error: ApiError | null;
  refresh: () => void;
}

export function usePoll<T>(load: () => Promise<T>, deps: unknown[] = [], every = POLL_MS): Polled<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const loadRef = useRef(load);
  loadRef.current = load;
  const seq = useRef(0);

  const refresh = useCallback(() => {
    const mine = ++seq.current;
    loadRef.current().then(
      (v) => {
        if (mine !== seq.current) return;
        setData(v);
        setError(null);
      },
      (err: unknown) => {
        if (mine !== seq.current) return;
        setError(err instanceof ApiError ? err : new ApiError(0, 'CLIENT', String(err)));
      },
    );
  }, []);

  useEffect(() => {
    refresh();
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') refresh();
    }, every);
    return () => {
      clearInterval(timer);
      seq.current++;
    };
  }, deps);

  return { data, error, refresh };
}
