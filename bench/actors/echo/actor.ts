import { getHeapStatistics } from 'node:v8';
import { threadId } from 'node:worker_threads';
import { defineActor, withTransfer } from '../../../runtime/index.js';
import { castLoop, requestLoop } from '../../lib/load.js';
import type { EchoProtocol, EchoState } from './messages.js';

/** Drive requests get this long: a load run is one request from the main thread. */
const LONG_MS = 120_000;

export default defineActor<EchoProtocol, EchoState, null>({
  kind: 'bench-echo',
  // No checkpoint: the state is a counter that only matters within one run.
  init: () => ({ ticks: 0 }),
  handlers: {
    echo(msg) {
      if (!msg.data) return 0;
      if (msg.back) return withTransfer(msg.data, [msg.data]);
      return msg.data.byteLength;
    },
    tick(_msg, ctx) {
      ctx.state.ticks++;
    },
    count: (_msg, ctx) => ctx.state.ticks,
    drive(msg, ctx) {
      const target = ctx.ref<EchoProtocol>(msg.target);
      return requestLoop((m, transfer) => target.request(m, { transfer, timeoutMs: LONG_MS }) as Promise<unknown>, msg.load);
    },
    flood(msg, ctx) {
      const target = ctx.ref<EchoProtocol>(msg.target);
      return castLoop(
        () => target.send({ type: 'tick' }),
        () => target.request({ type: 'count' }, { timeoutMs: LONG_MS }),
        msg.load,
      );
    },
    where(msg) {
      // gc is there when the process set --expose-gc (the bench does, before starting threads).
      if (msg.gc) (globalThis as { gc?: () => void }).gc?.();
      const h = getHeapStatistics();
      return { threadId, heapUsed: h.used_heap_size, heapTotal: h.total_heap_size };
    },
  },
});
