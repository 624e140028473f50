import { useState } from "preact/hooks";

/** A button's or form's call: runs it, keeps its error to show, and is busy meanwhile. */
export function useAction(): { error: string | null; busy: boolean; run: (call: () => Promise<unknown>) => Promise<boolean> } {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function run(call: () => Promise<unknown>): Promise<boolean> {
    setError(null);
    setBusy(true);
    try {
      await call();
      return true;
    } catch (err) {
      setError((err as Error).message);
      return false;
    } finally {
      setBusy(false);
    }
  }
  return { error, busy, run };
}
