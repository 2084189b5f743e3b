/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), so that a suite
 * checks what a real scraper would accept: every line is a `# HELP`, a `# TYPE` or a sample
 * `name{label="value",...} number`; a sample's family has a TYPE before it; anything else throws.
 */
const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
const VALUE = '(?:[-+]?(?:\\d+\\.?\\d*(?:[eE][-+]?\\d+)?|\\.\\d+(?:[eE][-+]?\\d+)?)|NaN|[-+]Inf)';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*,?)?\\})? (${VALUE})(?: -?\\d+)?$`);
const HELP = new RegExp(`^# HELP (${NAME}) .*$`);
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parsePrometheusText(text: string): { samples: Sample[]; types: Map<string, string> } {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    const type = TYPE.exec(line);
    if (type) {
      if (types.has(type[1] as string)) throw new Error(`second TYPE for ${type[1]}`);
      types.set(type[1] as string, type[2] as string);
      continue;
    }
    if (HELP.test(line)) continue;
    const sample = SAMPLE.exec(line);
    if (!sample) throw new Error(`not a valid exposition line: ${JSON.stringify(line)}`);
    const name = sample[1] as string;
    const family = [...types.keys()].find((t) => name === t || (/_(bucket|sum|count|total|created)$/.test(name) && name.replace(/_(bucket|sum|count|total|created)$/, '') === t));
    if (!family) throw new Error(`sample ${name} without a TYPE before it`);
    const labels: Record<string, string> = {};
    for (const m of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[m[1] as string] = (m[2] as string).replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c));
    const raw = sample[3] as string;
    samples.push({ name, labels, value: raw === 'NaN' ? Number.NaN : raw.endsWith('Inf') ? (raw.startsWith('-') ? -Infinity : Infinity) : Number(raw) });
  }
  return { samples, types };
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function sampleSum(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}
