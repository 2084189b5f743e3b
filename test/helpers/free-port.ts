import net from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago (bound to 0, read, closed), for servers
 * that must be told their port up front (postgres, nginx). Another process may take it before
 * the server binds it, so a caller retries a failed start on a new port, a bounded number of times.
 */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no port from listen(0)'))));
    });
  });
}
