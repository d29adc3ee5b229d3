import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';

export interface RunningServer {
  /** The bound port (the real one when asked for port 0). */
  port: number;
  /** Stops accepting connections and resolves once in-flight requests have finished. */
  close(): Promise<void>;
}

type FetchApp = { fetch: (request: Request, ...rest: never[]) => Response | Promise<Response> };
type Listener = (incoming: IncomingMessage, outgoing: ServerResponse) => unknown;

/**
 * The request listener: @hono/node-server's, with one shortcut. A body that came with its request
 * (Node's parser pushes it right after the 'request' event, so one microtask later all
 * Content-Length bytes are in the stream's buffer) is taken with one `read()` and handed over as
 * `rawBody`, the adapter's hook for a body read beforehand; the validator parses it without a
 * promise (src/http/validation.ts). Otherwise the adapter attaches four listeners, switches the
 * stream to flowing mode and waits for 'data' and 'end' on later ticks. Such a request needs none
 * of the adapter's draining of unread bodies (nothing is left to read), so it goes to a listener
 * without it; a body still in transit, or one without Content-Length, goes the adapter's way.
 */
function requestListener(app: FetchApp): Listener {
  const fetch = app.fetch as (request: Request) => Promise<Response>;
  const streamed = getRequestListener(fetch);
  const arrived = getRequestListener(fetch, { autoCleanupIncoming: false });
  return (incoming, outgoing) => {
    const length = incoming.headers['content-length'];
    if (length === undefined || incoming.method === 'GET' || incoming.method === 'HEAD') return streamed(incoming, outgoing);
    queueMicrotask(() => {
      if (incoming.readableLength !== Number(length) || incoming.readableDidRead) return void streamed(incoming, outgoing);
      (incoming as IncomingMessage & { rawBody?: Buffer }).rawBody = (incoming.read() as Buffer | null) ?? Buffer.alloc(0);
      void arrived(incoming, outgoing);
    });
  };
}

export function serveNode(app: FetchApp, port: number, hostname?: string): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = createServer(requestListener(app));
    server.once('error', reject);
    server.listen(port, hostname, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () => new Promise<void>((done, fail) => server.close((err) => (err ? fail(err) : done()))),
      });
    });
  });
}
