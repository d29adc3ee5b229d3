import { serve } from '@hono/node-server';

export interface RunningServer {
  /** The bound port (the real one when asked for port 0). */
  port: number;
  /** Stops accepting connections and resolves once in-flight requests have finished. */
  close(): Promise<void>;
}

type FetchApp = { fetch: (request: Request, ...rest: never[]) => Response | Promise<Response> };

export function serveNode(app: FetchApp, port: number, hostname?: string): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch as (request: Request) => Promise<Response>, port, hostname }, (info) => {
      server.off('error', reject);
      resolve({
        port: info.port,
        close: () => new Promise<void>((done, fail) => server.close((err) => (err ? fail(err) : done()))),
      });
    });
    server.once('error', reject);
  });
}
