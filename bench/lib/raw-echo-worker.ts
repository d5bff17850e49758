/**
 * Baseline peer: the same echo/tick/count protocol as the bench's echo actor, on a bare
 * worker_threads MessagePort with no actor runtime in between (no router, mailbox, metrics
 * or async context). What the runtime adds is the difference between the two.
 */
import { parentPort } from 'node:worker_threads';
import type { EchoRequest } from './load.js';

export type RawRequest = { rid?: number; msg: EchoRequest | { type: 'tick' } | { type: 'count' } };
export type RawReply = { rid: number; value: unknown };

let ticks = 0;
const port = parentPort!;
port.on('message', ({ rid, msg }: RawRequest) => {
  let value: unknown = null;
  let transfer: ArrayBuffer[] = [];
  switch (msg.type) {
    case 'tick':
      ticks++;
      return;
    case 'count':
      value = ticks;
      break;
    case 'echo':
      if (!msg.data) value = 0;
      else if (msg.back) {
        value = msg.data;
        transfer = [msg.data];
      } else value = msg.data.byteLength;
      break;
  }
  if (rid !== undefined) port.postMessage({ rid, value } satisfies RawReply, transfer);
});
