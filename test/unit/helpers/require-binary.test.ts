/**
 * requireBinary: the PATH lookup on real files in a temp dir, and the skip/fail decision seen
 * from outside, by running vitest itself on a test file that needs a program that does not
 * exist, once as a developer (skipped, with a warning) and once as CI (the file fails).
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinary, findFirstExecutable, MissingBinaryError, requireBinary } from '../../helpers/require-binary.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const MISSING = 'driveway-no-such-program-7f3a';

function writeExecutable(file: string, mode = 0o755): void {
  writeFileSync(file, '#!/bin/sh\nexit 0\n');
  chmodSync(file, mode);
}

describe('findBinary and requireBinary on a real PATH', () => {
  const tmp = makeTmpDir('driveway-require-binary-');
  const first = path.join(tmp.dir, 'first');
  const second = path.join(tmp.dir, 'second');
  afterAll(() => tmp.remove());

  beforeAll(() => {
    mkdirSync(first);
    mkdirSync(second);
    writeExecutable(path.join(first, 'tool'));
    writeExecutable(path.join(second, 'tool'));
    writeExecutable(path.join(first, 'not-executable'), 0o644);
    writeExecutable(path.join(second, 'not-executable'));
    mkdirSync(path.join(first, 'a-directory'));
    writeExecutable(path.join(second, 'a-directory'));
  });

  it('returns the absolute path of the first executable in PATH order', () => {
    expect(findBinary('tool', [first, second].join(path.delimiter))).toBe(path.join(first, 'tool'));
    expect(findBinary('tool', [second, first].join(path.delimiter))).toBe(path.join(second, 'tool'));
  });

  it('passes over a file without the execute bit and a directory of that name, as a shell does', () => {
    const searchPath = [first, second].join(path.delimiter);
    expect(findBinary('not-executable', searchPath)).toBe(path.join(second, 'not-executable'));
    expect(findBinary('a-directory', searchPath)).toBe(path.join(second, 'a-directory'));
    expect(findBinary('not-executable', first)).toBeUndefined();
  });

  it('ignores empty PATH entries and refuses a path instead of a name', () => {
    expect(findBinary('tool', `${path.delimiter}${second}${path.delimiter}`)).toBe(path.join(second, 'tool'));
    expect(() => findBinary('./tool', first)).toThrow(/program name, not a path/);
  });

  it('gives the path and a running describe when the program exists, without warning', () => {
    const warnings: string[] = [];
    const tool = requireBinary('tool', { env: { PATH: second, CI: 'true' }, warn: (m) => warnings.push(m) });
    expect(tool).toMatchObject({ name: 'tool', path: path.join(second, 'tool'), isAvailable: true });
    expect(warnings).toEqual([]);
  });

  it('warns and reports the program unavailable when it is missing outside CI', () => {
    for (const ci of [undefined, 'false', '1']) {
      const warnings: string[] = [];
      const tool = requireBinary(MISSING, { env: { PATH: first, CI: ci }, warn: (m) => warnings.push(m) });
      expect(tool).toMatchObject({ name: MISSING, path: '', isAvailable: false });
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`SKIPPING tests that need ${MISSING}`);
    }
  });

  it('throws, naming the program and CI, when it is missing and CI is "true"', () => {
    const call = () => requireBinary(MISSING, { env: { PATH: first, CI: 'true' }, warn: () => undefined });
    expect(call).toThrow(MissingBinaryError);
    expect(call).toThrow(new RegExp(`${MISSING} is not installed.*CI=true`));
  });
});

describe('requireBinary with absolute candidates (programs kept off PATH)', () => {
  const tmp = makeTmpDir('driveway-require-binary-candidates-');
  const libexec = path.join(tmp.dir, 'lib', 'postgresql', '15', 'bin');
  const onPath = path.join(tmp.dir, 'bin');
  afterAll(() => tmp.remove());

  beforeAll(() => {
    mkdirSync(libexec, { recursive: true });
    mkdirSync(onPath);
    writeExecutable(path.join(libexec, 'initdb'));
    writeExecutable(path.join(onPath, 'initdb'));
    writeExecutable(path.join(libexec, 'plain-file'), 0o644);
  });

  it('takes the first executable candidate, before PATH', () => {
    const absent = path.join(tmp.dir, 'lib', 'postgresql', '16', 'bin', 'initdb');
    const initdb = requireBinary('initdb', { env: { PATH: onPath }, candidates: [absent, path.join(libexec, 'initdb')] });
    expect(initdb).toMatchObject({ path: path.join(libexec, 'initdb'), isAvailable: true });
    expect(findFirstExecutable([path.join(libexec, 'plain-file'), path.join(onPath, 'initdb')])).toBe(path.join(onPath, 'initdb'));
    expect(() => findFirstExecutable(['relative/initdb'])).toThrow(/absolute paths/);
  });

  it('falls back to PATH, unless told not to, and names every place it looked when missing', () => {
    const absent = path.join(tmp.dir, 'nowhere', 'initdb');
    expect(requireBinary('initdb', { env: { PATH: onPath }, candidates: [absent] }).path).toBe(path.join(onPath, 'initdb'));
    const warnings: string[] = [];
    const gated = requireBinary('initdb', { env: { PATH: onPath }, candidates: [absent], searchPath: false, warn: (m) => warnings.push(m) });
    expect(gated.isAvailable).toBe(false);
    expect(warnings[0]).toContain(`not found in ${absent})`);
    expect(() => requireBinary('initdb', { env: { PATH: onPath, CI: 'true' }, candidates: [absent], searchPath: false })).toThrow(MissingBinaryError);
  });
});

interface VitestRun {
  exitCode: number | null;
  output: string;
  report: { numFailedTestSuites: number; numPendingTests: number; numPassedTests: number; testResults: Array<{ status: string; message: string }> };
}

describe('a test file gated by requireBinary, run by vitest', () => {
  // Inside the repository so the fixture resolves vitest from node_modules; .vitest-tmp is git-ignored.
  const baseDir = path.join(root, '.vitest-tmp');
  mkdirSync(baseDir, { recursive: true });
  const dir = mkdtempSync(path.join(baseDir, 'require-binary-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  beforeAll(() => {
    const helper = path.join(root, 'test/helpers/require-binary.ts');
    writeFileSync(path.join(dir, 'vitest.config.mjs'), "export default { test: { include: ['gated.test.ts'] } };\n");
    writeFileSync(
      path.join(dir, 'gated.test.ts'),
      [
        "import { expect, it } from 'vitest';",
        `import { requireBinary } from ${JSON.stringify(helper)};`,
        `const program = requireBinary(${JSON.stringify(MISSING)});`,
        "program.describe('needs the program', () => { it('runs it', () => { expect(program.path).not.toBe(''); }); });",
        "it('runs without the program', () => { expect(1).toBe(1); });",
        '',
      ].join('\n'),
    );
  });

  function runVitest(ci: string | undefined, name: string): Promise<VitestRun> {
    const reportFile = path.join(dir, `${name}.json`);
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    delete env.CI;
    delete env.VITEST;
    delete env.VITEST_MODE;
    delete env.VITEST_POOL_ID;
    delete env.VITEST_WORKER_ID;
    delete env.TEST;
    if (ci !== undefined) env.CI = ci;
    const args = [path.join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--root', dir, '--reporter=default', '--reporter=json', `--outputFile.json=${reportFile}`];
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.on('error', reject);
      child.on('close', (exitCode) => {
        try {
          resolve({ exitCode, output, report: JSON.parse(readFileSync(reportFile, 'utf8')) as VitestRun['report'] });
        } catch (err) {
          reject(new Error(`vitest left no report (exit ${exitCode}):\n${output}`, { cause: err }));
        }
      });
    });
  }

  it('skips the gated suite with a warning, and still runs the rest, outside CI', async () => {
    const run = await runVitest(undefined, 'developer');
    expect(run.exitCode, run.output).toBe(0);
    expect(run.report.numPendingTests).toBe(1);
    expect(run.report.numPassedTests).toBe(1);
    expect(run.output).toContain(`SKIPPING tests that need ${MISSING}`);
  });

  it('fails the whole test file when CI=true', async () => {
    const run = await runVitest('true', 'ci');
    expect(run.exitCode).toBe(1);
    expect(run.report.numFailedTestSuites).toBe(1);
    expect(run.report.numPassedTests).toBe(0);
    expect(run.report.testResults[0]?.status).toBe('failed');
    expect(run.report.testResults[0]?.message).toContain(`${MISSING} is not installed`);
  });
});
