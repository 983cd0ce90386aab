// The worker thread of index.mjs: each message a document, each answer its types, one at a time.
import { parentPort } from 'node:worker_threads';
import { openapiTypes } from './types.mjs';

parentPort.on('message', async (document) => parentPort.postMessage(await openapiTypes(document)));
