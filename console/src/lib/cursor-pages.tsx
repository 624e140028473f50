import { useState } from "preact/hooks";

/**
 * Paging by the service's next_cursor (audit, dead letters): the cursors seen are kept,
 * so Previous goes back without the service paging backwards.
 */
export function useCursors(): { cursor: string | undefined; reset: () => void; pager: (next: string | null) => preact.JSX.Element } {
  const [cursors, setCursors] = useState<string[]>([]);
  return {
    cursor: cursors.at(-1),
    reset: () => setCursors([]),
    pager: (next) => (
      <nav aria-label="Pages">
        <button type="button" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>Previous</button>
        <span>Page {cursors.length + 1}</span>
        <button type="button" disabled={!next} onClick={() => next && setCursors([...cursors, next])}>Next</button>
      </nav>
    ),
  };
}
