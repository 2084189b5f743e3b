/**
 * litmus 0.13, all five suites (basic, copymove, props, locks, http: 104 tests), against a real
 * bridge in front of a real store (issue 3, "Done when"). Every test must pass; a warning fails
 * the run unless litmus-accepted.md lists it with a reason. A red run names each failed test,
 * litmus's reason and the HTTP exchange neon logged for it (litmus's debug.log).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { bridgeFixture, type BridgeFixture } from '../helpers/start-bridge.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { debugLogSection, parseAcceptedWarnings, parseLitmusOutput, type LitmusReport } from './litmus-output.js';
import { describeRun, runProgram, type ProgramRun } from './run-program.js';

const litmus = requireBinary('litmus');

/** Tests per suite in litmus 0.13; 104 in all. */
const SUITES: ReadonlyArray<readonly [string, number]> = [
  ['basic', 16],
  ['copymove', 13],
  ['props', 30],
  ['locks', 41],
  ['http', 4],
];
const SUITE_ORDER = SUITES.map(([suite]) => suite);
const ACCEPTED_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'litmus-accepted.md');
const LITMUS_TIMEOUT_MS = 240_000;

describe('reading litmus output', () => {
  const sample = [
    "-> running `basic':",
    '\r 0. init.................. \r 0. init.................. pass',
    '\r 1. delete_fragment....... \r 1. delete_fragment....... WARNING: DELETE removed collection resource with Request-URI including fragment; unsafe',
    '    ...................... pass (with 1 warning)',
    "\r 2. mkcol................. \r 2. mkcol................. FAIL (MKCOL on `/home/litmus/coll/': 403 Forbidden",
    "Server must allow `MKCOL /home/litmus/coll/' for tests to proceed)",
    '\r 3. finish................ \r 3. finish................ SKIPPED',
    "<- summary for `basic': of 3 tests run: 2 passed, 1 failed. 66.7%",
    '-> 1 warning was issued.',
    "-> running `http':",
    '\r 0. init.................. \r 0. init.................. pass',
    "<- summary for `http': of 1 tests run: 1 passed, 0 failed. 100.0%",
    '',
  ].join('\n');

  it('reads each test once with its result, reason and warnings, and the summary per suite', () => {
    const report = parseLitmusOutput(sample);
    expect(report.tests).toEqual([
      { suite: 'basic', number: 0, name: 'init', result: 'pass', warnings: [] },
      {
        suite: 'basic',
        number: 1,
        name: 'delete_fragment',
        result: 'pass',
        warnings: ['DELETE removed collection resource with Request-URI including fragment; unsafe'],
      },
      {
        suite: 'basic',
        number: 2,
        name: 'mkcol',
        result: 'FAIL',
        reason: "MKCOL on `/home/litmus/coll/': 403 Forbidden\nServer must allow `MKCOL /home/litmus/coll/' for tests to proceed",
        warnings: [],
      },
      { suite: 'basic', number: 3, name: 'finish', result: 'SKIPPED', warnings: [] },
      { suite: 'http', number: 0, name: 'init', result: 'pass', warnings: [] },
    ]);
    expect(report.summaries).toEqual([
      { suite: 'basic', run: 3, passed: 2, failed: 1 },
      { suite: 'http', run: 1, passed: 1, failed: 0 },
    ]);
  });

  it('reads accepted warnings and refuses an entry without a reason', () => {
    expect(parseAcceptedWarnings('# t\n\n- `basic/delete_fragment`: "DELETE removed it" — fragments never reach the server\n')).toEqual([
      { suite: 'basic', test: 'delete_fragment', warning: 'DELETE removed it', reason: 'fragments never reach the server' },
    ]);
    expect(() => parseAcceptedWarnings('- `basic/delete_fragment`: "DELETE removed it"\n')).toThrow(/unreadable entry/);
  });

  it('finds the debug.log section of a test in the right suite', () => {
    const log = [
      'Version string: neon',
      '******* Running test 0: init ********',
      'basic init',
      'Version string: neon',
      '******* Running test 0: init ********',
      'locks init',
      '******* Running test 1: begin ********',
      'locks begin',
    ].join('\n');
    expect(debugLogSection(log, ['basic', 'locks'], { suite: 'locks', number: 0, name: 'init' })).toContain('locks init');
    expect(debugLogSection(log, ['basic', 'locks'], { suite: 'locks', number: 0, name: 'init' })).not.toContain('locks begin');
    expect(debugLogSection(log, ['basic', 'locks'], { suite: 'basic', number: 0, name: 'init' })).toContain('basic init');
  });

  it('the accepted-warnings file itself is readable', () => {
    expect(() => parseAcceptedWarnings(readFileSync(ACCEPTED_FILE, 'utf8'))).not.toThrow();
  });
});

litmus.describe('litmus 0.13 against bridge + store', () => {
  let f: BridgeFixture;
  let tmp: ReturnType<typeof makeTmpDir>;
  let run: ProgramRun;
  let report: LitmusReport;
  let debugLog = '';

  beforeAll(async () => {
    f = await bridgeFixture();
    tmp = makeTmpDir('driveway-litmus-');
    const user = await f.newDavUser();
    // litmus needs a writable collection to work in; its suites create and remove everything below it.
    const mkcol = await request(`${f.davUrl}/home/litmus/`, { method: 'MKCOL', headers: { authorization: user.auth } });
    await mkcol.body.dump();
    expect(mkcol.statusCode).toBe(201);
    run = await runProgram(litmus.path, ['-k', `${f.davUrl}/home/litmus/`, user.email, user.password], {
      cwd: tmp.dir,
      env: { ...process.env, TESTS: SUITE_ORDER.join(' ') },
      timeoutMs: LITMUS_TIMEOUT_MS,
    });
    report = parseLitmusOutput(run.stdout);
    try {
      debugLog = readFileSync(path.join(tmp.dir, 'debug.log'), 'utf8');
    } catch {
      debugLog = '';
    }
  }, LITMUS_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await f?.close();
    tmp?.remove();
  });

  it('finished in time, without crashing', () => {
    expect(run.timedOut, describeRun(run)).toBe(false);
    expect(run.signal, describeRun(run)).toBeNull();
  });

  it.each(SUITES)('passes every test of the %s suite (%i tests)', (suite, count) => {
    const tests = report.tests.filter((test) => test.suite === suite);
    const notPassed = tests.filter((test) => test.result !== 'pass');
    const details = notPassed
      .map((test) => `${suite}/${test.number}. ${test.name}: ${test.result}${test.reason ? ` (${test.reason})` : ''}\n${debugLogSection(debugLog, SUITE_ORDER, test)}`)
      .join('\n\n');
    const message = `litmus ${suite}: ${notPassed.length} of ${tests.length} tests did not pass\n${details}\n\n${describeRun(run, 12_000)}`;
    expect(notPassed.map((test) => `${test.number}. ${test.name}: ${test.result}${test.reason ? ` (${test.reason})` : ''}`), message).toEqual([]);
    expect(report.summaries.find((summary) => summary.suite === suite), message).toEqual({ suite, run: count, passed: count, failed: 0 });
  });

  it('issues no warning that litmus-accepted.md does not list with a reason', () => {
    const accepted = parseAcceptedWarnings(readFileSync(ACCEPTED_FILE, 'utf8'));
    const unaccepted = report.tests.flatMap((test) =>
      test.warnings
        .filter((warning) => !accepted.some((entry) => entry.suite === test.suite && entry.test === test.name && warning.includes(entry.warning)))
        .map((warning) => `${test.suite}/${test.name}: "${warning}"\n${debugLogSection(debugLog, SUITE_ORDER, test)}`),
    );
    expect(unaccepted, `warnings not listed in test/clients/litmus-accepted.md:\n${unaccepted.join('\n\n')}\n\n${describeRun(run, 12_000)}`).toEqual([]);
  });

  it('leaves the bridge answering after the whole run', async () => {
    const res = await request(`${f.davUrl}/`, { method: 'OPTIONS' });
    await res.body.dump();
    expect(res.statusCode).toBe(200);
  });
});
