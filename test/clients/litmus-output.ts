/**
 * Reads what litmus 0.13 prints (neon's test framework: one line per test, `WARNING:` lines
 * inside a test, a summary per suite) and what test/clients/litmus-accepted.md accepts. Pure
 * text handling: running litmus is litmus.test.ts's job.
 */

export interface LitmusTestResult {
  suite: string;
  number: number;
  name: string;
  /** pass, FAIL, SKIPPED, XFAIL or OOPS, as litmus prints it. */
  result: string;
  /** What litmus printed in parentheses after FAIL or SKIPPED. */
  reason?: string;
  warnings: string[];
}

export interface LitmusSummary {
  suite: string;
  run: number;
  passed: number;
  failed: number;
}

export interface LitmusReport {
  tests: LitmusTestResult[];
  summaries: LitmusSummary[];
}

export interface AcceptedWarning {
  suite: string;
  test: string;
  warning: string;
  reason: string;
}

const RUNNING = /^-> running `([^']+)':/;
const TEST_LINE = /^\s*(\d+)\.\s(\S+?)\.{2,}\s?(.*)$/;
const RESULT = /^\s*(?:\.{2,}\s+)?(pass|FAIL|SKIPPED|XFAIL|OOPS)\b(?:\s*\((.*))?/;
const SUMMARY = /^<- summary for `([^']+)': of (\d+) tests run: (\d+) passed, (\d+) failed/;

/**
 * Litmus redraws each test line with a carriage return when stdout is not a terminal, so a
 * test's name can appear twice before its result; segments are read one by one.
 */
export function parseLitmusOutput(output: string): LitmusReport {
  const tests: LitmusTestResult[] = [];
  const summaries: LitmusSummary[] = [];
  let suite = '';
  let current: LitmusTestResult | undefined;
  /** A reason in parentheses may span lines (litmus's own messages contain newlines). */
  let reasonOpen = false;

  const addReason = (text: string) => {
    if (!current) return;
    reasonOpen = !text.endsWith(')');
    const part = reasonOpen ? text : text.slice(0, -1);
    current.reason = current.reason === undefined ? part : `${current.reason}\n${part}`;
    if (/^with \d+ warnings?$/.test(current.reason)) delete current.reason;
  };

  const readRest = (rest: string) => {
    if (!current) return;
    const warning = /^WARNING:\s?(.*)$/.exec(rest);
    if (warning) {
      current.warnings.push((warning[1] ?? '').trim());
      return;
    }
    const result = RESULT.exec(rest);
    if (result && !current.result) {
      current.result = result[1] ?? '';
      if (result[2] !== undefined) addReason(result[2]);
      return;
    }
    if (reasonOpen) addReason(rest);
  };

  for (const segment of output.split(/[\r\n]/)) {
    if (!segment.trim()) continue;
    const running = RUNNING.exec(segment);
    if (running) {
      suite = running[1] ?? '';
      current = undefined;
      reasonOpen = false;
      continue;
    }
    const summary = SUMMARY.exec(segment);
    if (summary) {
      summaries.push({ suite: summary[1] ?? '', run: Number(summary[2]), passed: Number(summary[3]), failed: Number(summary[4]) });
      current = undefined;
      reasonOpen = false;
      continue;
    }
    const testLine = TEST_LINE.exec(segment);
    if (testLine) {
      const number = Number(testLine[1]);
      const name = testLine[2] ?? '';
      if (!current || current.number !== number || current.name !== name || current.suite !== suite) {
        current = { suite, number, name, result: '', warnings: [] };
        tests.push(current);
        reasonOpen = false;
      }
      readRest((testLine[3] ?? '').trim());
      continue;
    }
    readRest(segment.trim());
  }
  return { tests, summaries };
}

/**
 * Entries of litmus-accepted.md: one bullet per accepted warning,
 *   - `suite/test`: "warning text as litmus prints it" — why it is accepted
 * A bullet in that shape without a reason is an error, so nothing is accepted silently.
 */
export function parseAcceptedWarnings(markdown: string): AcceptedWarning[] {
  const accepted: AcceptedWarning[] = [];
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('- `')) continue;
    const entry = /^- `([^/`]+)\/([^`]+)`: "(.+)"\s+—\s+(.*)$/.exec(line.trim());
    if (!entry || !(entry[4] ?? '').trim()) {
      throw new Error(`litmus-accepted.md: unreadable entry (want - \`suite/test\`: "warning" — reason): ${line}`);
    }
    accepted.push({ suite: entry[1] ?? '', test: entry[2] ?? '', warning: entry[3] ?? '', reason: (entry[4] ?? '').trim() });
  }
  return accepted;
}

/**
 * The part of litmus's debug.log (the HTTP exchanges neon logged) for one test. Every suite
 * program appends to the same debug.log and starts with neon's version line, so the n-th
 * version line opens the n-th suite of `suiteOrder`.
 */
export function debugLogSection(
  debugLog: string,
  suiteOrder: readonly string[],
  test: { suite: string; number: number; name: string },
  maxChars = 8_000,
): string {
  const suiteLogs = debugLog.split(/^(?=Version string: )/m).filter((part) => part.startsWith('Version string: '));
  const suiteLog = suiteLogs[suiteOrder.indexOf(test.suite)];
  if (suiteLog === undefined) return `(no debug.log part for suite ${test.suite})`;
  const marker = `******* Running test ${test.number}: ${test.name} ********`;
  const start = suiteLog.indexOf(marker);
  if (start < 0) return '(no debug.log section for this test)';
  const next = suiteLog.indexOf('******* Running test ', start + marker.length);
  const section = suiteLog.slice(start, next < 0 ? undefined : next);
  return section.length > maxChars ? `${section.slice(0, maxChars)}\n… (${section.length - maxChars} more chars in debug.log)` : section;
}
