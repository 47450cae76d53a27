// The worker thread that prepares large document payloads (see payload-parser.ts).

import { parentPort } from 'node:worker_threads';
import { ApiError } from '../../errors/api-error.js';
import { ownMemory, preparePayload } from './prepare-payload.js';
import type { FromPayloadThread, ToPayloadThread } from './payload-parser.js';

const port = parentPort!;

port.on('message', (m: ToPayloadThread) => {
  let answer: FromPayloadThread;
  try {
    const p = preparePayload(m.request);
    const bytes = ownMemory(p.bytes);
    answer = { id: m.id, ok: true, documents: p.documents, exactIntegers: p.exactIntegers, bytes };
    port.postMessage(answer, [bytes.buffer as ArrayBuffer]);
    return;
  } catch (e) {
    answer = e instanceof ApiError ? { id: m.id, ok: false, code: e.code, message: e.message } : { id: m.id, ok: false, code: null, message: e instanceof Error ? (e.stack ?? e.message) : String(e) };
  }
  port.postMessage(answer);
});
