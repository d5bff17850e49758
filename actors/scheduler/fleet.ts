/**
 * The volumes as the scheduler sees them: the records in LMDB (flags) joined with what each
 * volume actor answers (present, capacity, I/O stats). The object store actor starts and stops
 * the volume actors; the scheduler only asks them. Every request it sends carries
 * `priority: 'low'`, so the volume's queue serves client reads and writes first.
 */
import type { ActorRef, Message } from '../../runtime/index.js';
import { ActorError } from '../../runtime/index.js';
import { takesNewSlices } from '../../protocols/objstore/layout.js';
import type { VolumeFill } from '../../protocols/objstore/maintenance.js';
import { volumeActorId, type VolumeInfo, type VolumeProtocol } from '../volume/messages.js';
import type { Metadata, VolumeRecord } from '../objstore/store/index.js';

export interface FleetVolume {
  rec: VolumeRecord;
  info: VolumeInfo | null;
}

/** A volume ref whose every message goes at low priority. */
function lowPriority(ref: ActorRef<VolumeProtocol>): ActorRef<VolumeProtocol> {
  return {
    id: ref.id,
    send: (msg, opts) => ref.send({ ...(msg as object), priority: 'low' } as typeof msg, opts),
    request: (msg, opts) => ref.request({ ...(msg as Message), priority: 'low' } as typeof msg, opts),
  };
}

export class Fleet {
  private readonly meta: Metadata;
  private readonly refOf: (id: string) => ActorRef<VolumeProtocol>;
  private readonly refs = new Map<number, ActorRef<VolumeProtocol>>();
  private vols = new Map<number, FleetVolume>();
  /** bytes of slices written to a volume since the last refresh (capacity lags the writes) */
  private readonly pendingBytes = new Map<number, number>();

  constructor(meta: Metadata, refOf: (id: string) => ActorRef<VolumeProtocol>) {
    this.meta = meta;
    this.refOf = refOf;
  }

  /** Ask every live volume's actor for its info (absent or silent volumes count as not present). */
  async refresh(): Promise<void> {
    const next = new Map<number, FleetVolume>();
    const recs: VolumeRecord[] = [];
    for (const { value } of this.meta.volumes.getRange()) if (!value.isDeleted) recs.push(value);
    await Promise.all(
      recs.map(async (rec) => {
        let info: VolumeInfo | null = null;
        try {
          info = await this.rawRef(rec.id).request({ type: 'info' }, { timeoutMs: 3000 });
        } catch (err) {
          if (!(err instanceof ActorError)) throw err;
        }
        next.set(rec.id, { rec, info });
      }),
    );
    this.vols = next;
    // Old slices of flipped moves still take room until their grace period ends.
    this.pendingBytes.clear();
    for (const { value: mv } of this.meta.moves.getRange()) if (mv.phase === 'flipped' && mv.from !== mv.to) this.account(mv.from, -(mv.bytes ?? 0));
  }

  private rawRef(id: number): ActorRef<VolumeProtocol> {
    let r = this.refs.get(id);
    if (!r) {
      r = this.refOf(volumeActorId(id));
      this.refs.set(id, r);
    }
    return r;
  }

  /** The volume's actor (low priority), if it answered at the last refresh. */
  ref(id: number): ActorRef<VolumeProtocol> | null {
    return this.vols.get(id)?.info ? lowPriority(this.rawRef(id)) : null;
  }

  present(id: number): boolean {
    return Boolean(this.vols.get(id)?.info);
  }

  /** The current record (flags change under us: read LMDB, not the cache). */
  record(id: number): VolumeRecord | undefined {
    return this.meta.volumes.get(id);
  }

  /** Volumes that may take a new slice: present, enabled, writable, healthy, not draining. */
  writable(): Array<{ id: number; bytesFree: number }> {
    const out: Array<{ id: number; bytesFree: number }> = [];
    for (const [id, v] of this.vols) {
      const rec = this.record(id);
      if (!v.info || !rec || !takesNewSlices(rec)) continue;
      out.push({ id, bytesFree: v.info.bytesFree - (this.pendingBytes.get(id) ?? 0) });
    }
    return out;
  }

  /** Fills of the volumes that take part in a rebalance (the writable ones). */
  fills(): VolumeFill[] {
    const out: VolumeFill[] = [];
    for (const w of this.writable()) {
      const info = this.vols.get(w.id)!.info!;
      out.push({ id: w.id, bytesTotal: info.bytesTotal, bytesUsed: info.bytesTotal - w.bytesFree });
    }
    return out;
  }

  /** Account for a slice just written to (positive) or freed from (negative) a volume. */
  account(id: number, bytes: number): void {
    this.pendingBytes.set(id, (this.pendingBytes.get(id) ?? 0) + bytes);
  }

  all(): FleetVolume[] {
    return [...this.vols.values()];
  }
}
