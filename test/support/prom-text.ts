/**
 * A strict reader of the Prometheus text exposition format (0.0.4), for tests: it throws
 * on any line the format does not allow, on a sample of a family never declared with
 * `# TYPE`, on a family declared twice, and on a series given twice.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  help: string;
  samples: Sample[];
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`);
const SUFFIXES: Record<Family["type"], string[]> = { counter: [""], gauge: [""], untyped: [""], histogram: ["_bucket", "_sum", "_count"], summary: ["", "_sum", "_count"] };

/**
 * A value as Prometheus reads it (Go's strconv.ParseFloat): special values in any case,
 * as prom-client writes NaN `Nan`.
 */
function parseValue(text: string, line: string): number {
  const special = text.toLowerCase();
  if (special === "+inf" || special === "inf") return Infinity;
  if (special === "-inf") return -Infinity;
  if (special === "nan") return NaN;
  if (!/^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad value in: ${line}`);
  return Number(text);
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf("=", i);
    if (eq < 0) throw new Error(`bad labels in: ${line}`);
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name) || text[eq + 1] !== '"') throw new Error(`bad label name in: ${line}`);
    let value = "";
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] !== "\\") {
        value += text[j];
        continue;
      }
      const next = text[++j];
      if (next === "n") value += "\n";
      else if (next === "\\" || next === '"') value += next;
      else throw new Error(`bad escape in: ${line}`);
    }
    if (j >= text.length) throw new Error(`unterminated label value in: ${line}`);
    if (Object.hasOwn(labels, name)) throw new Error(`label ${name} twice in: ${line}`);
    labels[name] = value;
    i = j + 1;
    if (i < text.length) {
      if (text[i] !== ",") throw new Error(`bad label separator in: ${line}`);
      i++;
    }
  }
  return labels;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const helps = new Map<string, string>();
  const series = new Set<string>();
  const familyOf = (sample: string): Family | undefined => {
    for (const f of families.values()) if (SUFFIXES[f.type].some((s) => f.name + s === sample)) return f;
    return undefined;
  };
  if (!text.endsWith("\n")) throw new Error("the text must end with a line feed");
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const help = new RegExp(`^# HELP (${NAME}) (.*)$`).exec(line);
    const type = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(line);
    if (help) {
      if (helps.has(help[1]!)) throw new Error(`HELP twice for ${help[1]}`);
      helps.set(help[1]!, help[2]!);
    } else if (type) {
      if (families.has(type[1]!)) throw new Error(`TYPE twice for ${type[1]}`);
      families.set(type[1]!, { name: type[1]!, type: type[2] as Family["type"], help: helps.get(type[1]!) ?? "", samples: [] });
    } else if (line.startsWith("#")) {
      throw new Error(`unexpected comment: ${line}`);
    } else {
      const m = SAMPLE.exec(line);
      if (!m) throw new Error(`not a sample: ${line}`);
      const family = familyOf(m[1]!);
      if (!family) throw new Error(`sample of an undeclared family: ${line}`);
      const labels = m[2] ? parseLabels(m[2], line) : {};
      const key = `${m[1]}${JSON.stringify(Object.entries(labels).sort())}`;
      if (series.has(key)) throw new Error(`series twice: ${line}`);
      series.add(key);
      family.samples.push({ name: m[1]!, labels, value: parseValue(m[3]!, line) });
    }
  }
  return families;
}

/** The samples named `name` whose labels include `labels`. */
export function samplesOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): Sample[] {
  const out: Sample[] = [];
  for (const f of families.values()) {
    for (const s of f.samples) if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) out.push(s);
  }
  return out;
}

/** The sum of the samples named `name` whose labels include `labels` (0 when there is none). */
export function total(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  return samplesOf(families, name, labels).reduce((sum, s) => sum + s.value, 0);
}
