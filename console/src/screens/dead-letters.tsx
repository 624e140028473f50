import { api } from "../lib/api.js";
import { useCursors } from "../lib/cursor-pages.js";
import { Table } from "../lib/table.js";
import { useLoad } from "../lib/use-load.js";
import type { DeadLetterPage } from "../../../client/types.js";

const PAGE = 50;

/** The project's dead letters, oldest first: why each was set aside, its errors, and the message as received. */
export function DeadLetters() {
  const { cursor, pager } = useCursors();
  const page = useLoad(() => api<DeadLetterPage>("GET", "/v1/dead-letters", { query: { limit: PAGE, cursor } }), [cursor]);
  return (
    <main>
      <h1>Dead letters</h1>
      <p>Device-feed messages of this project the service could not accept, and stored logs the log query cannot hold.</p>
      {page.error && <p role="alert" class="error">{page.error.message}</p>}
      {page.value && (
        <>
          <p aria-live="polite">{page.value.count === 0 && cursor === undefined ? "No dead letters." : `${page.value.count} on this page`}</p>
          {page.value.count > 0 && (
            <Table label="Dead letters" columns={["Received", "Reason", "Errors", "Message"]}>
              {page.value.dead_letters.map((d) => (
                <tr key={d.id}>
                  <td>{d.received_at}<br /><code>{d.subject}</code></td>
                  <td>{d.reason}</td>
                  <td>
                    <ul>{d.errors.map((e, i) => <li key={i}>#{e.index} {e.code}: {e.message}</li>)}</ul>
                    {d.errors_total !== undefined && <p>{d.errors_total} errors in all</p>}
                  </td>
                  <td>
                    <details>
                      <summary>Show message{d.truncated ? " (cut)" : ""}</summary>
                      <pre>{JSON.stringify(d.message, null, 2)}</pre>
                    </details>
                  </td>
                </tr>
              ))}
            </Table>
          )}
          {pager(page.value.next_cursor)}
        </>
      )}
    </main>
  );
}
