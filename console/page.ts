import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type Koa from 'koa';
import { HttpError } from '../runtime/errors.js';
import { pageHeaders } from '../runtime/security-headers.js';

/**
 * The console's page: the files `vite build` made of console/ui, read once
 * at start and served from memory under a strict Content-Security-Policy
 * (nothing from elsewhere, no inline script).
 */
const CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export function consolePage(prefix: string, assetsDir: string): Koa.Middleware {
  const assets = loadAssets(assetsDir);
  const serve: Koa.Middleware = async (ctx) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new HttpError(405, `Method ${ctx.method} not allowed`, { Allow: 'GET, HEAD' });
    if (ctx.path === prefix) return ctx.redirect(`${prefix}/`);
    const file = ctx.path === `${prefix}/` ? 'index.html' : ctx.path.slice(prefix.length + 1);
    const asset = assets.get(file);
    if (!asset) throw new HttpError(404, 'Not found');
    ctx.set('Content-Security-Policy', CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.type = asset.type;
    ctx.body = asset.body;
  };
  return (ctx, next) => pageHeaders(ctx, () => serve(ctx, next));
}

function loadAssets(dir: string): Map<string, { type: string; body: Buffer }> {
  const assets = new Map<string, { type: string; body: Buffer }>();
  if (!existsSync(path.join(dir, 'index.html'))) {
    assets.set('index.html', {
      type: TYPES['.html']!,
      body: Buffer.from('<!doctype html><title>xmlrest console</title><p>The console is not built: run <code>npm run build</code>.</p>'),
    });
    return assets;
  }
  const walk = (folder: string, prefix: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full, `${prefix}${entry.name}/`);
      else assets.set(`${prefix}${entry.name}`, { type: TYPES[path.extname(entry.name)] ?? 'application/octet-stream', body: readFileSync(full) });
    }
  };
  walk(dir, '');
  return assets;
}
