/**
 * The store's metadata journal as another thread sees it: the scheduler changes records too (its
 * slice moves, a volume's draining flag), on its own LMDB handle, and those changes must be
 * journalled like every other. The journal has one writer (the store actor: one sequence counter,
 * group commit), so the scheduler's Metadata gets this stand-in, which appends through the store
 * actor's messages (journalAppend answers once the record is durable; journalSettle follows the
 * transaction). The change's transaction itself stays on the scheduler's thread: the flip of a
 * move commits the scheduler's own counts with it (relocate.ts onFlip).
 */
import type { ActorRef } from '../../../runtime/index.js';
import type { JournalOp } from '../../../protocols/objstore/journal-format.js';
import type { MetaJournal } from '../metadata.js';
import type { ObjstoreProtocol } from '../messages.js';

export function remoteJournal(store: ActorRef<ObjstoreProtocol>): MetaJournal {
  return {
    append: (op: JournalOp) => store.request({ type: 'journalAppend', op }),
    // 0: the store runs without a journal; nothing to settle.
    settle: (seq: number) => {
      if (seq > 0) store.send({ type: 'journalSettle', seq });
    },
  };
}
