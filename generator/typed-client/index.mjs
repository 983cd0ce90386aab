// Build time only (a dev dependency of xmlrest, never in a production install): openapi-typescript, with the
// TypeScript 5 it takes as a peer in node_modules/ beside it. The project's own compiler is TypeScript 7, whose
// package has no JavaScript API, so npm installs this folder's dependencies here, apart.
import { Worker } from 'node:worker_threads';

let worker;
let queue = Promise.resolve();

/**
 * The TypeScript types of an OpenAPI document (types.mjs), made on a worker thread: loading openapi-typescript
 * takes a second and more, and running it a fraction of one, during which the caller's thread (a dev server's)
 * goes on serving. One worker for the process, kept between documents (loaded once), and let go while idle so
 * that it never holds the process open; documents are typed one after another.
 */
export function openapiTypes(document) {
  const typed = queue.then(
    () =>
      new Promise((resolve, reject) => {
        worker ??= new Worker(new URL('./worker.mjs', import.meta.url));
        const current = worker;
        const settle = (error, types) => {
          current.off('message', answered).off('error', failed).off('exit', exited).unref();
          if (error) {
            worker = undefined;
            reject(error);
          } else resolve(types);
        };
        const answered = (types) => settle(undefined, types);
        const failed = (error) => settle(error);
        const exited = (code) => settle(new Error(`openapi-typescript's worker exited with code ${code}`));
        current.on('message', answered).on('error', failed).on('exit', exited).ref();
        current.postMessage(document);
      }),
  );
  queue = typed.catch(() => undefined);
  return typed;
}
