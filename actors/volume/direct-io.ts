/**
 * Reads that reach the disk. The volume actor reads slice files with O_DIRECT, so that a read
 * gets what the disk holds now, not pages the kernel cached when the slice was written: a GET or a
 * scrub must see a disk that has died or rotted (design.md, "Failing disks"). A buffered read of
 * a freshly written slice on a dead disk still "succeeds" from the page cache.
 *
 * O_DIRECT needs the buffer's address, the file offset and the length aligned to the device's
 * logical block size. Node has no aligned allocation, but the memory of a WebAssembly.Memory is
 * page-aligned (V8 maps it with the system's page allocator), so the reads go into such memories,
 * aligned to 4096 bytes (enough for 512-byte and 4Kn disks), and the wanted bytes are copied out.
 * The memories are pooled per thread; one whose read timed out is not reused until that read
 * really ends (the kernel may still write into it).
 */
import type { FileHandle } from 'node:fs/promises';

// The global WebAssembly of V8; @types/node 20 does not declare it (tsconfig has no DOM lib).
declare const WebAssembly: { Memory: new (desc: { initial: number; maximum?: number }) => { readonly buffer: ArrayBuffer } };

export const DIRECT_ALIGN = 4096;
/**
 * Largest single read; longer spans are read piece by piece. 4 MiB: on the 2-core VM, O_DIRECT
 * reads of an XFS file on a loop device, CRC32C included, ran at ~0.9 GiB/s in 1 MiB pieces and
 * ~1.45 GiB/s in 4 MiB pieces (one at a time; 4 at once: 1.35 and 1.45 GiB/s).
 */
export const DIRECT_PIECE = 4 << 20;
const WASM_PAGE = 65536;

/**
 * Aligned buffers of this thread, of one size: slabs of `perSlab` slots, each slab one
 * WebAssembly.Memory (few of them: V8 reserves several GiB of address space for each Memory).
 * Slots are kept for reuse, never freed: the memory is touched once (which is dear on a VM that
 * backs guest pages lazily) and then used again and again.
 */
export class AlignedSlots {
  private readonly free: Uint8Array[] = [];
  constructor(
    readonly slotBytes: number,
    private readonly perSlab: number,
  ) {
    if (slotBytes % DIRECT_ALIGN !== 0) throw new RangeError(`aligned slots must be a multiple of ${DIRECT_ALIGN} bytes, got ${slotBytes}`);
  }

  acquire(): Uint8Array {
    if (!this.free.length) {
      const pages = Math.ceil((this.perSlab * this.slotBytes) / WASM_PAGE);
      const mem = new WebAssembly.Memory({ initial: pages, maximum: pages });
      for (let i = 0; i < this.perSlab; i++) this.free.push(new Uint8Array(mem.buffer, i * this.slotBytes, this.slotBytes));
    }
    return this.free.pop()!;
  }

  release(slot: Uint8Array): void {
    this.free.push(slot);
  }
}

/**
 * Read slots by piece size: a piece plus the alignment slack at both ends. Taken only while a
 * read runs (and, read ahead, until the sink has taken it).
 */
const readSlots = new Map<number, AlignedSlots>();
const slotsFor = (piece: number): AlignedSlots => {
  let slots = readSlots.get(piece);
  if (!slots) readSlots.set(piece, (slots = new AlignedSlots(piece + 2 * DIRECT_ALIGN, 8)));
  return slots;
};

/** How a read runs: through the disk's queue, with its timeout. `late` runs when an operation ends after its timeout. */
export type RunIo = <T>(what: string, op: () => Promise<T>, late?: (result: T | undefined) => void) => Promise<T>;

/** How readSpan cuts a span: pieces of `piece` bytes (at most DIRECT_PIECE), `ahead` of them read ahead. */
export interface SpanReading {
  piece?: number;
  /**
   * Reads of the next pieces started before the sink takes the current one (0: one read at a
   * time). For a sink that costs as much as the read (a sealed slice's chunks are deciphered in
   * it), the disk then reads while the thread deciphers.
   */
  ahead?: number;
}

/**
 * Read bytes [position, position + length) of `fh` and hand them to `sink` in order, in pieces
 * of at most DIRECT_PIECE bytes (views valid only during the call). Returns the number of bytes
 * delivered: less than `length` when the file ends first.
 */
export async function readSpan(fh: FileHandle, position: number, length: number, run: RunIo, sink: (bytes: Uint8Array) => void, how: SpanReading = {}): Promise<number> {
  const piece = how.piece ?? DIRECT_PIECE;
  const ahead = how.ahead ?? 0;
  if (!Number.isSafeInteger(piece) || piece < DIRECT_ALIGN || piece > DIRECT_PIECE || piece % DIRECT_ALIGN !== 0) throw new RangeError(`readSpan: piece must be a multiple of ${DIRECT_ALIGN} up to ${DIRECT_PIECE} bytes, got ${piece}`);
  const slots = slotsFor(piece);
  const acquire = () => slots.acquire();
  const release = (slot: Uint8Array) => slots.release(slot);
  const pieces: Array<{ from: number; want: number }> = [];
  for (let off = 0; off < length; off += piece) pieces.push({ from: position + off, want: Math.min(piece, length - off) });
  const reads: Array<Promise<{ bytesRead: number; slot: Uint8Array }> | null> = [];
  let issued = 0;
  const issue = (i: number) => {
    const { from, want } = pieces[i]!;
    const alignedFrom = Math.floor(from / DIRECT_ALIGN) * DIRECT_ALIGN;
    const alignedLen = Math.ceil((from + want) / DIRECT_ALIGN) * DIRECT_ALIGN - alignedFrom;
    let taken: Uint8Array | null = null;
    // The slot is taken when the read starts, and given back by `late` if the read outlives its
    // timeout (the kernel may write into it until the read ends).
    const p = run(
      'read',
      async () => {
        const slot = (taken = acquire());
        try {
          return { bytesRead: (await fh.read(slot, 0, alignedLen, alignedFrom)).bytesRead, slot };
        } catch (err) {
          taken = null;
          release(slot);
          throw err;
        }
      },
      () => taken && release(taken),
    );
    p.catch(() => undefined);
    reads[i] = p;
  };
  let delivered = 0;
  try {
    for (let i = 0; i < pieces.length; i++) {
      while (issued < pieces.length && issued <= i + ahead) issue(issued++);
      const { from, want } = pieces[i]!;
      const { bytesRead, slot } = await reads[i]!;
      reads[i] = null;
      const skip = from - Math.floor(from / DIRECT_ALIGN) * DIRECT_ALIGN;
      const n = Math.max(0, Math.min(want, bytesRead - skip));
      try {
        if (n > 0) sink(slot.subarray(skip, skip + n));
      } finally {
        release(slot);
      }
      delivered += n;
      if (n < want) break;
    }
  } finally {
    // Reads started ahead and not taken (the file ended, a read or the sink failed): their slots
    // go back when they end.
    for (const r of reads) if (r) void r.then(({ slot }) => release(slot), () => undefined);
  }
  return delivered;
}
