import { createServer } from 'node:net';

/**
 * Why `npm start` cannot serve on `host:port`, or undefined when it can: asked before
 * anything starts, so a busy port is said plainly instead of tokens being printed for a server
 * that is someone else's.
 */
export function portProblem(port: number, host: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      resolve(
        error.code === 'EADDRINUSE'
          ? `port ${port} is already in use on ${host} (another npm start or wrangler dev?): stop that, or choose another port: PORT=${port < 65_535 ? port + 1 : 8788} npm start`
          : `cannot listen on ${host}:${port}: ${error.message}`,
      );
    });
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}
