/**
 * The one way a page loads what it shows: `useResource(load, deps)` runs `load` on mount and
 * whenever `deps` change, and answers `{data, error, loading, refresh, set}`:
 *   data     the last value loaded (kept while a refresh runs, so the page does not blink)
 *   error    the failure in words for a person (errorText), cleared by the next success
 *   loading  true while a load runs
 *   refresh  loads again (after a change the page made); resolves when done, never rejects
 *   set      replaces `data` here without a load (an answer that already holds the new value)
 * An answer that arrives after the page left, or after a newer load began, is dropped: the
 * newest load wins, whatever order the answers come back in.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from './client.js';

export interface Resource<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  refresh: () => Promise<void>;
  set: (value: T) => void;
}

export function useResource<T>(load: () => Promise<T>, deps: readonly unknown[]): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const latest = useRef(0);
  const live = useRef(true);
  const loader = useRef(load);
  loader.current = load;

  const run = useCallback(async (): Promise<void> => {
    latest.current += 1;
    const mine = latest.current;
    setLoading(true);
    try {
      const value = await loader.current();
      if (!live.current || mine !== latest.current) return;
      setData(value);
      setError(undefined);
    } catch (err) {
      if (!live.current || mine !== latest.current) return;
      setError(errorText(err));
    } finally {
      if (live.current && mine === latest.current) setLoading(false);
    }
  }, []);

  useEffect(() => {
    live.current = true;
    void run();
    return () => {
      live.current = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);

  const set = useCallback((value: T) => {
    latest.current += 1;
    setData(value);
    setError(undefined);
    setLoading(false);
  }, []);

  return { data, error, loading, refresh: run, set };
}
