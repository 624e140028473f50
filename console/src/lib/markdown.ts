import DOMPurify from "dompurify";
import { marked } from "marked";

/**
 * A view's markdown as HTML a page may hold: parsed by marked, then sanitized by DOMPurify
 * (no scripts, handlers or styles), since view text carries what clients sent.
 */
export function safeHtml(markdown: string): string {
  const html = marked.parse(markdown, { async: false, gfm: true });
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_ATTR: ["style"] });
}
