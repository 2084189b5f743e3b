/**
 * A self-signed certificate for 127.0.0.1 (openssl), for suites that run a listener over HTTPS:
 * the PEM files, the certificate a client trusts, and the flags that make both listeners use it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface TestCertificate {
  certFile: string;
  keyFile: string;
  /** The certificate itself: what a client passes as `ca` to trust it. */
  cert: Buffer;
  /** store.tlsCert/tlsKey and bridge.tlsCert/tlsKey set to it. */
  flags: Record<string, string>;
}

/** Writes cert.pem and key.pem into `dir` (valid one day, subjectAltName IP:127.0.0.1). */
export function selfSignedCertificate(dir: string): TestCertificate {
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1', '-keyout', keyFile, '-out', certFile], { stdio: 'ignore' });
  return {
    certFile,
    keyFile,
    cert: readFileSync(certFile),
    flags: { 'store.tlsCert': certFile, 'store.tlsKey': keyFile, 'bridge.tlsCert': certFile, 'bridge.tlsKey': keyFile },
  };
}
