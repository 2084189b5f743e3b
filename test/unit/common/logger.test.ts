/**
 * redactUrl and the logger's redaction paths: tokens and keys never reach a log line, whether
 * they travel in a URL path, a query string or a logged object.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, prettyLine, redactUrl, requestSerializers } from '../../../src/common/logger.js';

const UUID = '0b6c1f8e-1f0e-4a52-9a7e-2c6c1c1f0e4a';

describe('redactUrl', () => {
  it.each([
    ['the upload token in /upload/<token>', '/upload/abc.DEF-123_x', '/upload/[redacted]'],
    ['the upload token and keeps the query', '/upload/abc?x=1', '/upload/[redacted]?x=1'],
    ['the upload token in an absolute URL', 'http://127.0.0.1:8080/upload/tok', 'http://127.0.0.1:8080/upload/[redacted]'],
    [
      'the fileaccesskey of a view URL and keeps the rest of the path',
      `/resources/auth/view/KEY123/${UUID}/999999999999999/a.txt`,
      `/resources/auth/view/[redacted]/${UUID}/999999999999999/a.txt`,
    ],
    [
      'the fileaccesskey of a download URL',
      `http://h:1/resources/auth/download/K-e_y/${UUID}/3/report.pdf`,
      `http://h:1/resources/auth/download/[redacted]/${UUID}/3/report.pdf`,
    ],
    ['the fileaccesskey of a zip URL and keeps its query', `/resources/auth/zip/K-e_y/a.zip?node=${UUID}`, `/resources/auth/zip/[redacted]/a.zip?node=${UUID}`],
    ['chat_token in the query', '/api/user/logout?chat_token=secret', '/api/user/logout?chat_token=[redacted]'],
    ['token= among other parameters', '/x?a=1&token=abc&b=2', '/x?a=1&token=[redacted]&b=2'],
    ['key= and keeps a fragment', '/x?key=abc#frag', '/x?key=[redacted]#frag'],
    ['password= whatever its case', '/x?Password=Hunter2', '/x?Password=[redacted]'],
    ['access_token=', '/x?access_token=abc', '/x?access_token=[redacted]'],
    ['a public link token', '/public/AbC_d-123', '/public/[redacted]'],
    ['a link token and keeps the path below it', '/public/AbC/sub/file.txt?x=1', '/public/[redacted]/sub/file.txt?x=1'],
    ['an upload link token', 'http://h:1/public/AbC/upload', 'http://h:1/public/[redacted]/upload'],
  ])('hides %s', (_what, input, expected) => {
    expect(redactUrl(input)).toBe(expected);
  });

  it.each([
    ['a node path', `/api/nodes/${UUID}/dirlist`],
    ['a top-level identifier', `/api/nodes/home:${UUID}`],
    ['the upload-token request (it carries no secret)', `/api/nodes/${UUID}/upload`],
    ['a query without secrets', '/api/users?format=short'],
    ['an empty string', ''],
    ['a folder called public below the root (a DAV path)', '/webdrive/team/public/plan.txt'],
  ])('leaves %s unchanged', (_what, input) => {
    expect(redactUrl(input)).toBe(input);
  });

  it('hides every occurrence in one string', () => {
    expect(redactUrl('/upload/a?next=/upload/b')).toBe('/upload/[redacted]?next=/upload/[redacted]');
  });
});

describe('createLogger', () => {
  function capture(): { stream: Writable; text: () => string } {
    const chunks: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString('utf8'));
        done();
      },
    });
    return { stream, text: () => chunks.join('') };
  }

  it('censors passwords, tokens, keys and the authorization header in logged objects', () => {
    const out = capture();
    const log = createLogger('trace', out.stream);
    log.info({ password: 'Pw-1', token: 'jwt-1', fileaccesskey: 'fak-1' }, 'top level');
    log.info({ body: { password: 'Pw-2', token: 'jwt-2', fileaccesskey: 'fak-2' } }, 'nested');
    log.info({ req: { headers: { authorization: 'Bearer jwt-3', cookie: 'c=1' } } }, 'headers');
    log.trace({ busboyOptions: { headers: { authorization: 'Bearer jwt-4', cookie: 'c=2', host: 'h' } } }, 'a library copy');
    const text = out.text();
    for (const secret of ['Pw-1', 'jwt-1', 'fak-1', 'Pw-2', 'jwt-2', 'fak-2', 'jwt-3', 'c=1', 'jwt-4', 'c=2']) expect(text).not.toContain(secret);
    expect(text.match(/\[redacted\]/g)?.length).toBeGreaterThanOrEqual(10);
    expect(text).toContain('"host":"h"');
  });

  it('serializes requests with a redacted URL and without headers', () => {
    const line = requestSerializers.req({ method: 'POST', url: '/upload/tok', id: 'r1', ip: '127.0.0.1' });
    expect(line).toEqual({ id: 'r1', method: 'POST', url: '/upload/[redacted]', ip: '127.0.0.1' });
  });
});

describe('prettyLine (log.format: pretty)', () => {
  const time = Date.UTC(2026, 0, 2, 3, 4, 5, 67);

  it('writes time, level, part and message, then the other fields as key=value', () => {
    const line = JSON.stringify({ level: 30, time, pid: 1, hostname: 'h', part: 'bridge', msg: 'request', method: 'PUT', path: '/home/a b.txt', status: 201, ms: 4.5 });
    expect(prettyLine(line)).toBe('03:04:05.067 INFO  bridge: request method=PUT path="/home/a b.txt" status=201 ms=4.5\n');
  });

  it('indents an error stack below its line and keeps a message on one line', () => {
    const line = JSON.stringify({ level: 50, time, msg: 'failed\nFAKE 00:00:00.000 INFO  forged', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at here' } });
    const out = prettyLine(line);
    expect(out).toBe('03:04:05.067 ERROR failed FAKE 00:00:00.000 INFO  forged\n    Error: boom\n        at here\n');
  });

  it('passes anything that is not a JSON object through unchanged', () => {
    expect(prettyLine('not json\n')).toBe('not json\n');
    expect(prettyLine('[1,2]\n')).toBe('[1,2]\n');
  });

  it('is what createLogger writes with format pretty, after redaction', () => {
    const chunks: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString('utf8'));
        done();
      },
    });
    createLogger('info', stream, 'pretty').child({ part: 'store' }).info({ password: 'Pw-9', user: 'u1' }, 'hello');
    expect(chunks.join('')).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO  store: hello password=\[redacted\] user=u1\n$/);
  });
});
