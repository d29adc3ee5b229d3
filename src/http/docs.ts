/** The interactive API reference, served from swagger-ui-dist in node_modules: no CDN, works offline. */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { GatehouseError } from '../errors.ts';
import type { AppHono } from './deps.ts';

/** The files of swagger-ui-dist that /docs serves, with their content types (the Lambda bundle ships them). */
export const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

// URLs are relative so the page also works under a path prefix (API Gateway stage).
const INIT_JS = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: new URL('openapi.json', window.location.href).href,
    dom_id: '#swagger-ui',
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout',
    validatorUrl: null,
    persistAuthorization: true,
  });
});
`;

const HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Gatehouse API reference</title>
  <link rel="stylesheet" href="docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="docs/assets/swagger-ui-bundle.js"></script>
  <script src="docs/assets/swagger-ui-standalone-preset.js"></script>
  <script src="docs/assets/init.js"></script>
</body>
</html>
`;

const distDir = () => dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const cache = new Map<string, Promise<Buffer>>();

function asset(file: string): Promise<Buffer> {
  let content = cache.get(file);
  if (!content) {
    content = readFile(join(distDir(), file));
    content.catch(() => cache.delete(file)); // retry a failed read next time
    cache.set(file, content);
  }
  return content;
}

export function registerDocs(app: AppHono): void {
  app.get('/docs', (c) => c.html(HTML));
  app.get('/docs/assets/init.js', (c) => c.body(INIT_JS, 200, { 'content-type': 'text/javascript; charset=utf-8' }));
  app.get('/docs/assets/:file', async (c) => {
    const file = c.req.param('file');
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) throw new GatehouseError('NOT_FOUND', `No route for GET ${c.req.path}`);
    const body = await asset(file);
    return c.body(new Uint8Array(body), 200, { 'content-type': type, 'cache-control': 'public, max-age=86400' });
  });
}
