/**
 * The volume actor: one per mounted volume (`volume.<id>`, shared thread group 'volumes'), owner of
 * all I/O to its disk. The messages are in messages.ts; the work is done by Volume (volume.ts).
 *
 * Its state is null: it checkpoints nothing, the disk is the state. Its live value is the open
 * Volume (made in `open`, closed by the runtime when the instance ends). A restart reopens the disk;
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
import { defineActor, ReplyError, withTransfer } from '../../runtime/index.js';
import { ioPriority } from './io-queue.js';
import type { Priority, VolumeArgs, VolumeProtocol } from './messages.js';
import { recordsOf } from './slice-record.js';
import { Volume } from './volume.js';

/** Run `fn` in the I/O priority of message `msg`. */
function at<R>(msg: { priority?: Priority }, fn: () => R): R {
  const p = msg.priority === undefined ? 'normal' : msg.priority;
  if (p !== 'normal' && p !== 'low') throw new ReplyError('BAD_REQUEST', `priority must be 'normal' or 'low', got ${JSON.stringify(p)}`);
  return ioPriority.run(p, fn);
}

export default defineActor<VolumeProtocol, null, VolumeArgs, Volume>({
  kind: 'volume',
  concurrency: 64,
  init: () => null,
  /** The disk, opened for this instance (a restart opens it anew); closed by the runtime (Volume.close). */
  async open(ctx) {
    const volume = await Volume.open(ctx.args, ctx.log);
    ctx.log.info({ volumeId: ctx.args.volumeId, mountPoint: ctx.args.mountPoint, device: ctx.args.device, readOnly: ctx.args.readOnly }, 'volume opened');
    return volume;
  },
  handlers: {
    info: (msg, _ctx, volume) => at(msg, () => volume.info()),
    create: (msg, _ctx, volume) => at(msg, () => volume.create(msg, msg.header, msg.replace === true)),
    append: (msg, _ctx, volume) =>
      at(msg, async () => {
        // The written chunk's buffer goes back (moved, not copied) so the writer can reuse it.
        const buf = await volume.append(msg, msg.chunk, msg.data, msg.commit === true);
        return buf ? withTransfer(buf, [buf]) : null;
      }),
    commit: (msg, _ctx, volume) => at(msg, () => volume.commit(msg)),
    abort: (msg, _ctx, volume) => at(msg, () => volume.abort(msg)),
    read: (msg, _ctx, volume) =>
      at(msg, async () => {
        const r = await volume.read(msg, msg.firstChunk, msg.count, msg.into);
        return withTransfer(r, [r.data]);
      }),
    readHeader: (msg, _ctx, volume) => at(msg, () => volume.readHeader(msg)),
    // A slice goes with its record sidecar (slice-record.ts).
    delete: (msg, ctx, volume) =>
      at(msg, async () => {
        const r = await volume.delete(msg);
        await recordsOf(volume, ctx.log).remove(msg);
        return r;
      }),
    path: (msg, _ctx, volume) => at(msg, () => volume.path(msg)),
    purge: (msg, ctx, volume) =>
      at(msg, async () => {
        const r = await volume.purge(msg.objectIds);
        await recordsOf(volume, ctx.log).purge(msg.objectIds);
        return r;
      }),
    setReadOnly: (msg, _ctx, volume) => at(msg, () => volume.setReadOnly(msg.readOnly)),
    writeRecord: (msg, ctx, volume) => at(msg, () => recordsOf(volume, ctx.log).write(msg.record)),
  },
});
