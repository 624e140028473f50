import { useEffect, useRef, useState } from "preact/hooks";

/**
 * A button for something that cannot be undone: the first press asks, in place, with the
 * question and a Yes and a No button (Yes takes the focus; Escape or No goes back).
 * Inline rather than window.confirm, which a strict CSP page styles nothing of and a
 * screen reader announces without context.
 */
export function ConfirmButton({ label, question, yes, disabled, onConfirm }: { label: string; question: string; yes: string; disabled?: boolean; onConfirm: () => void }) {
  const [asking, setAsking] = useState(false);
  const yesRef = useRef<HTMLButtonElement>(null);
  const askRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) yesRef.current?.focus();
  }, [asking]);
  const back = () => {
    setAsking(false);
    // The next frame: the button is back in the page only after this render.
    requestAnimationFrame(() => askRef.current?.focus());
  };
  if (!asking) {
    return <button type="button" ref={askRef} disabled={disabled} onClick={() => setAsking(true)}>{label}</button>;
  }
  return (
    <span role="group" aria-label={question} class="confirm" onKeyDown={(e) => e.key === "Escape" && back()}>
      <span>{question}</span>{" "}
      <button type="button" ref={yesRef} disabled={disabled} onClick={() => { setAsking(false); onConfirm(); }}>{yes}</button>{" "}
      <button type="button" onClick={back}>No</button>
    </span>
  );
}
