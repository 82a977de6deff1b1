// Loading a tool's result into a page: the data, the error as text, and a way to load it again.
import { useCallback, useEffect, useState } from "preact/hooks";
import { call } from "./api.js";

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload(): void;
}

/** Calls `tool` with `args` now and whenever `key` (default: the arguments as JSON) changes. */
export function useCall<T>(tool: string | null, args: Record<string, unknown> = {}, key?: string): Loaded<T> {
  const dep = key ?? `${tool}:${JSON.stringify(args)}`;
  const [state, setState] = useState<{ data: T | null; error: string | null; loading: boolean }>({
    data: null,
    error: null,
    loading: tool !== null,
  });
  const [round, setRound] = useState(0);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  // `dep` stands for tool and args: they are read inside, the effect reruns when `dep` changes.
  useEffect(() => {
    if (tool === null) return;
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    call<T>(tool, args).then(
      (data) => live && setState({ data, error: null, loading: false }),
      (e: Error) => live && setState({ data: null, error: e.message, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [dep, round]);
  return { ...state, reload };
}
