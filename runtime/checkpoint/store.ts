/**
 * Durable actor checkpoints in LMDB: one environment per state directory
 * (`<stateDir>/hostd.lmdb`), named database `checkpoints`, key = actor id.
 *
 * Every thread opens the same environment (lmdb-js shares it within the process); a save
 * is one transaction and resolves once the commit is flushed to disk, so a checkpoint that
 * resolved before `kill -9` (or a power cut) is there after restart.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';

export interface CheckpointRecord<S = unknown> {
  id: string;
  kind: string;
  /** ms since the epoch */
  updatedAt: number;
  state: S;
  /** Which writer (a thread's checkpoint module) wrote it, and its write number there: see WRITER. */
  writer?: string;
  seq?: number;
}

export interface CheckpointSummary {
  id: string;
  kind: string;
  updatedAt: number;
  /** encoded size in bytes */
  size: number;
}

export const ENV_FILE = 'hostd.lmdb';

/**
 * Checkpoints of one id can be written through two roots of the environment on one thread (the
 * host's store, and `within` the records' root, so that a checkpoint commits with the records a
 * transaction changes), and lmdb-js gives each root its own write queue: an asynchronous save
 * asked before a synchronous one could commit after it and put an older state back (seen: a
 * drain's moved count fell behind the slices it had flipped when the process was killed then).
 * So every write carries this thread's writer id and a number taken when it was asked for, and
 * an asynchronous save that finds a newer write of the same writer at commit time writes nothing.
 */
const WRITER = `${process.pid}.${Math.random().toString(36).slice(2, 10)}`;
let writes = 0;

export function openEnvironment(stateDir: string, opts: { readOnly?: boolean } = {}): RootDatabase {
  if (!opts.readOnly) mkdirSync(stateDir, { recursive: true });
  return open({ path: join(stateDir, ENV_FILE), maxDbs: 64, readOnly: opts.readOnly ?? false });
}

export class CheckpointStore {
  private readonly root: RootDatabase;
  private readonly db: Database<CheckpointRecord, string>;
  private readonly ownsRoot: boolean;

  private constructor(root: RootDatabase, ownsRoot: boolean) {
    this.root = root;
    this.ownsRoot = ownsRoot;
    this.db = root.openDB<CheckpointRecord, string>({ name: 'checkpoints', structuredClone: true } as never);
  }

  static open(stateDir: string, opts: { readOnly?: boolean } = {}): CheckpointStore {
    return new CheckpointStore(openEnvironment(stateDir, opts), true);
  }

  /** Use an environment someone else owns (and closes). */
  static within(root: RootDatabase): CheckpointStore {
    return new CheckpointStore(root, false);
  }

  async save<S>(id: string, kind: string, state: S): Promise<void> {
    // The state as it is now (the write comes later, inside the transaction).
    const record: CheckpointRecord<S> = { id, kind, updatedAt: Date.now(), state: structuredClone(state), writer: WRITER, seq: ++writes };
    await this.root.transaction(() => {
      const current = this.db.get(id);
      if (current?.writer === WRITER && (current.seq ?? 0) > record.seq!) return; // a newer write is there
      this.db.putSync(id, record);
    });
    await this.db.flushed;
  }

  /**
   * Write a checkpoint inside the caller's LMDB transaction (call it from `root.transaction()`),
   * so that it commits, or not, together with the records the transaction changes.
   */
  saveSync<S>(id: string, kind: string, state: S): void {
    this.db.putSync(id, { id, kind, updatedAt: Date.now(), state, writer: WRITER, seq: ++writes });
  }

  load<S>(id: string): CheckpointRecord<S> | undefined {
    return this.db.get(id) as CheckpointRecord<S> | undefined;
  }

  async delete(id: string): Promise<void> {
    await this.db.remove(id);
    await this.db.flushed;
  }

  list(): CheckpointSummary[] {
    const out: CheckpointSummary[] = [];
    for (const { key, value } of this.db.getRange()) {
      const size = this.db.getBinary(key)?.length ?? 0;
      out.push({ id: key, kind: value.kind, updatedAt: value.updatedAt, size });
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.ownsRoot) await this.root.close();
  }
}
