import { useEffect, useState } from "preact/hooks";

/** A value loaded when its inputs change, with its error; `reload` loads it again. */
export function useLoad<T>(load: () => Promise<T>, inputs: unknown[]): { value: T | undefined; error: Error | undefined; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ value?: T; error?: Error; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (value) => live && setState({ value, loading: false }),
      (error: Error) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...inputs, tick]);
  return { value: state.value, error: state.error, loading: state.loading, reload: () => setTick((t) => t + 1) };
}
