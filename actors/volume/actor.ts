/**
 * The volume actor: one per mounted volume (`volume.<id>`, shared thread group 'volumes'), owner of
 * all I/O to its disk. The messages are in messages.ts; the work is done by Volume (volume.ts).
 *
 * Its state is null: it checkpoints nothing, the disk is the state. A restart reopens the disk;
 * slices that were being written are gone (their temp files are removed at clean-up, or by the
 * next `purge`), which is safe because nothing refers to an uncommitted slice.
 *
 * Concurrency 64: several slices are written and read at once (a PUT writes one slice per volume
 * per object, a GET reads them in parallel); each slice's own operations stay in order (Volume's
 * per-slice chain) and the disk sees at most args.maxInflight file operations at a time. The disk
 * queue, not the mailbox, is the limit: handlers are many so that background messages waiting in
 * the queue behind client I/O do not take every handler slot from client messages.
 *
 * Every handler runs in the I/O priority of its message (`priority`, default normal; see
 * messages.ts) through ioPriority, which the disk queue reads for each file operation.
 */
import { defineActor, ReplyError, withTransfer, type ActorContext } from '../../runtime/index.js';
import { ioPriority } from './io-queue.js';
import type { Priority, VolumeArgs, VolumeProtocol } from './messages.js';
import { Volume } from './volume.js';

/** The Volume of each running instance (a restart gets a new context, so a new Volume). */
const volumes = new WeakMap<ActorContext<null, VolumeArgs>, Volume>();

function vol(ctx: ActorContext<null, VolumeArgs>): Volume {
  const v = volumes.get(ctx);
  if (!v) throw new Error(`volume actor ${ctx.id} has no open volume`);
  return v;
}

/** Run `fn` in the I/O priority of message `m`. */
function at<R>(m: { priority?: Priority }, fn: () => R): R {
  const p = m.priority === undefined ? 'normal' : m.priority;
  if (p !== 'normal' && p !== 'low') throw new ReplyError('BAD_REQUEST', `priority must be 'normal' or 'low', got ${JSON.stringify(p)}`);
  return ioPriority.run(p, fn);
}

export default defineActor<VolumeProtocol, null, VolumeArgs>({
  kind: 'volume',
  concurrency: 64,
  async init(ctx) {
    const v = await Volume.open(ctx.args, ctx.log);
    volumes.set(ctx, v);
    ctx.onCleanup(() => v.close());
    ctx.log.info({ volumeId: ctx.args.volumeId, mountPoint: ctx.args.mountPoint, device: ctx.args.device, readOnly: ctx.args.readOnly }, 'volume opened');
    return null;
  },
  handlers: {
    info: (m, ctx) => at(m, () => vol(ctx).info()),
    create: (m, ctx) => at(m, () => vol(ctx).create(m, m.header, m.replace === true)),
    append: (m, ctx) =>
      at(m, async () => {
        // The written chunk's buffer goes back (moved, not copied) so the writer can reuse it.
        const buf = await vol(ctx).append(m, m.chunk, m.data, m.commit === true);
        return buf ? withTransfer(buf, [buf]) : null;
      }),
    commit: (m, ctx) => at(m, () => vol(ctx).commit(m)),
    abort: (m, ctx) => at(m, () => vol(ctx).abort(m)),
    read: (m, ctx) =>
      at(m, async () => {
        const r = await vol(ctx).read(m, m.firstChunk, m.count, m.into);
        return withTransfer(r, [r.data]);
      }),
    readHeader: (m, ctx) => at(m, () => vol(ctx).readHeader(m)),
    delete: (m, ctx) => at(m, () => vol(ctx).delete(m)),
    path: (m, ctx) => at(m, () => vol(ctx).path(m)),
    purge: (m, ctx) => at(m, () => vol(ctx).purge(m.objectIds)),
    setReadOnly: (m, ctx) => at(m, () => vol(ctx).setReadOnly(m.readOnly)),
  },
});
