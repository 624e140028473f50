import { MAX_LINE_ERRORS, type JobRecord, type LineError } from "./job-record.js";

/**
 * A file check's line errors, at most MAX_LINE_ERRORS of them, shared by the job's
 * VALIDATING stage and the offline `pss validate`. The errors that fail the file are
 * never crowded out by skippable ones: a file with thousands of payload errors before
 * its one broken line still names that line. All in line order when they fit; past the
 * cap, the failing ones first (in line order), then as many skippable ones as fit.
 */
export class LineErrorSummary {
  private readonly failing: LineError[] = [];
  private readonly skippable: LineError[] = [];
  /** Every error added, kept or not. */
  total = 0;
  /** Errors added that fail the file, kept or not. */
  failingTotal = 0;
  private copied = -1;

  add(e: LineError, fails: boolean): void {
    this.total++;
    if (fails) this.failingTotal++;
    const into = fails ? this.failing : this.skippable;
    if (into.length < MAX_LINE_ERRORS) into.push(e);
  }

  get truncated(): boolean {
    return this.total > MAX_LINE_ERRORS;
  }

  list(): LineError[] {
    const byLine = (a: LineError, b: LineError) => a.line - b.line;
    const failing = [...this.failing].sort(byLine);
    const skippable = [...this.skippable].sort(byLine);
    if (!this.truncated) return [...failing, ...skippable].sort(byLine);
    return [...failing, ...skippable].slice(0, MAX_LINE_ERRORS);
  }

  /** Shows the errors in a job's record (rebuilt only when some were added since the last copy). */
  copyTo(r: Pick<JobRecord, "error_summary" | "error_summary_truncated">): void {
    if (this.copied === this.total) return;
    this.copied = this.total;
    r.error_summary = this.list();
    r.error_summary_truncated = this.truncated;
  }
}
