/**
 * The frames between the broker (native-mount.ts) and the libfuse 3 file system
 * (native/objstore-fuse/, its broker.c) over its stdin and stdout: one home for the format, the C
 * side follows it. Little-endian. Every frame: u32 length (of what follows), u32 n, then
 *   from the file system: u8 op, body;   from the broker: i32 code (0, or a negative errno), body.
 * n is a question's number (the answer repeats it); 0 for what has no answer (MOUNTED, RELEASE).
 *
 *   op        the file system's body                  the broker's answer body (code 0)
 *   MOUNTED   -                                       (none: no answer)
 *   GETATTR   path                                    attr: u32 mode, u32 nlink, u64 size, f64 mtime (ms);
 *                                                     then hints: the next entries of a listed container,
 *                                                     each u16 name length, name, attr (what ls -l asks next)
 *   READDIR   path                                    names, each ended by a NUL
 *   OPEN      u32 flags, path                         u64 size, object id
 *   FETCH     u64 start, u32 length, u8 ahead, id     u64 slot offset, u32 bytes (code -EAGAIN: a fetch ahead declined)
 *   RELEASE   u64 slot offset                         (none: the slot is given back)
 */
export const OP = { MOUNTED: 0, GETATTR: 1, READDIR: 2, OPEN: 3, FETCH: 4, RELEASE: 5 } as const;

export type Frame =
  | { n: number; op: typeof OP.MOUNTED }
  | { n: number; op: typeof OP.GETATTR | typeof OP.READDIR; path: string }
  | { n: number; op: typeof OP.OPEN; flags: number; path: string }
  | { n: number; op: typeof OP.FETCH; start: number; length: number; ahead: boolean; id: string }
  | { n: number; op: typeof OP.RELEASE; slot: number };

/** Largest frame either side sends: a listing of 100 000 names of up to 255 bytes fits. */
export const MAX_FRAME = 64 << 20;

/** Split the file system's output into frames (a chunk may hold several, or part of one). */
export class FrameReader {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Frame[] {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const frames: Frame[] = [];
    while (this.pending.length >= 4) {
      const len = this.pending.readUInt32LE(0);
      if (len < 5 || len > MAX_FRAME) throw new Error(`objstore-fuse sent a frame of ${len} bytes`);
      if (this.pending.length < 4 + len) break;
      frames.push(decode(this.pending.subarray(4, 4 + len)));
      this.pending = this.pending.subarray(4 + len);
    }
    return frames;
  }
}

function decode(f: Buffer): Frame {
  const n = f.readUInt32LE(0);
  const op = f[4]!;
  const b = f.subarray(5);
  switch (op) {
    case OP.MOUNTED:
      return { n, op };
    case OP.GETATTR:
    case OP.READDIR:
      return { n, op, path: b.toString('utf8') };
    case OP.OPEN:
      return { n, op, flags: b.readUInt32LE(0), path: b.subarray(4).toString('utf8') };
    case OP.FETCH:
      return { n, op, start: Number(b.readBigUInt64LE(0)), length: b.readUInt32LE(8), ahead: b[12] === 1, id: b.subarray(13).toString('latin1') };
    case OP.RELEASE:
      return { n, op, slot: Number(b.readBigUInt64LE(0)) };
    default:
      throw new Error(`objstore-fuse sent an unknown op ${op}`);
  }
}

/** An answer frame: n, code, body. */
export function answer(n: number, code: number, body: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt32LE(8 + body.length, 0);
  head.writeUInt32LE(n, 4);
  head.writeInt32LE(code, 8);
  return Buffer.concat([head, body]);
}

/** Hints after a GETATTR's attr: at most this many (one answer then serves `ls -l` for them). */
export const MAX_HINTS = 512;

export function hintsBody(hints: Array<{ name: string; attr: Parameters<typeof attrBody>[0] }>): Buffer {
  return Buffer.concat(
    hints.slice(0, MAX_HINTS).flatMap(({ name, attr }) => {
      const n = Buffer.from(name, 'utf8');
      const len = Buffer.alloc(2);
      len.writeUInt16LE(n.length, 0);
      return [len, n, attrBody(attr)];
    }),
  );
}

export function attrBody(a: { mode: number; nlink: number; size: number; mtime: Date }): Buffer {
  const b = Buffer.alloc(24);
  b.writeUInt32LE(a.mode, 0);
  b.writeUInt32LE(a.nlink, 4);
  b.writeBigUInt64LE(BigInt(a.size), 8);
  b.writeDoubleLE(a.mtime.getTime(), 16);
  return b;
}

export function namesBody(names: string[]): Buffer {
  return Buffer.concat(names.flatMap((name) => [Buffer.from(name, 'utf8'), Buffer.alloc(1)]));
}

export function openBody(size: number, id: string): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(size), 0);
  return Buffer.concat([b, Buffer.from(id, 'latin1')]);
}

export function fetchBody(slot: number, bytes: number): Buffer {
  const b = Buffer.alloc(12);
  b.writeBigUInt64LE(BigInt(slot), 0);
  b.writeUInt32LE(bytes, 8);
  return b;
}
