import type { ComponentChildren } from "preact";

/** A table named for assistive technology, its column headers scoped: the rows are the caller's. */
export function Table({ label, columns, children }: { label: string; columns: string[]; children: ComponentChildren }) {
  return (
    <table aria-label={label}>
      <thead>
        <tr>{columns.map((c) => <th key={c} scope="col">{c}</th>)}</tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
