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
}

export interface CheckpointSummary {
  id: string;
  kind: string;
  updatedAt: number;
  /** encoded size in bytes */
  size: number;
}

export const ENV_FILE = 'hostd.lmdb';

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
    await this.db.put(id, { id, kind, updatedAt: Date.now(), state });
    await this.db.flushed;
  }

  /**
   * Write a checkpoint inside the caller's LMDB transaction (call it from `root.transaction()`),
   * so that it commits, or not, together with the records the transaction changes.
   */
  saveSync<S>(id: string, kind: string, state: S): void {
    this.db.putSync(id, { id, kind, updatedAt: Date.now(), state });
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
