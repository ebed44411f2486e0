/**
 * The live view's HTTP server, on 127.0.0.1 only: `/` (the page), `/uplot.js`, `/uplot.css`,
 * `/client.js` and `/state.json` (the current {@link ViewSnapshot}). GET / HEAD only; anything
 * else is 404 / 405. No state is changed through it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { livePage, viewAssets } from './page.ts';
import type { ViewSnapshot } from './snapshot.ts';

/** The port the live view asks for first (a busy port falls back to one the OS picks). */
export const DefaultViewPort = 8370;

export interface ViewServer {
  /** `http://127.0.0.1:PORT/` */
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the server. `port` 0 lets the OS pick; with `fallback`, a busy port falls back to 0.
 * @throws Error (EADDRINUSE, EACCES) when it cannot listen and has no fallback.
 */
export async function startViewServer(opts: { snapshot: () => Promise<ViewSnapshot>; port?: number; fallback?: boolean }): Promise<ViewServer> {
  const assets = viewAssets();
  const page = livePage();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    const send = (type: string, body: string) => {
      res.writeHead(200, { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    switch (path) {
      case '/':
      case '/index.html':
        return send('text/html', page);
      case '/uplot.js':
        return send('text/javascript', assets.uplotJs);
      case '/uplot.css':
        return send('text/css', assets.uplotCss);
      case '/client.js':
        return send('text/javascript', assets.clientJs);
      case '/state.json':
        opts
          .snapshot()
          .then((s) => send('application/json', JSON.stringify(s)))
          .catch((err: unknown) => {
            res.writeHead(503, { 'content-type': 'text/plain' }).end(`snapshot failed: ${err instanceof Error ? err.message : String(err)}`);
          });
        return;
      default:
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  const port = await listen(server, opts.port ?? DefaultViewPort).catch((err: NodeJS.ErrnoException) => {
    if (opts.fallback && (err.code === 'EADDRINUSE' || err.code === 'EACCES')) return listen(server, 0);
    throw err;
  });
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, '127.0.0.1');
  });
}
