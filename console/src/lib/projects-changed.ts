import { useEffect, useState } from "preact/hooks";

/**
 * A signal that the organization's projects changed (created, renamed, deprecated,
 * restored) on this page, so that what lists them apart from the Projects screen (the
 * project switcher) loads them again. One page, one list: an event on a module-level
 * target is all the sharing needed.
 */
const changes = new EventTarget();

export const projectsChanged = (): void => {
  changes.dispatchEvent(new Event("change"));
};

/** A number that moves on each change: a dependency for the effect that loads the projects. */
export function useProjectsVersion(): number {
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const on = () => setVersion((v) => v + 1);
    changes.addEventListener("change", on);
    return () => changes.removeEventListener("change", on);
  }, []);
  return version;
}
