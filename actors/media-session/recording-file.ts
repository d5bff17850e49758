/**
 * One recording's PCAP file on disk: created exclusively (an existing file is never
 * overwritten), written through a bounded queue so a slow or stalled disk never holds up the
 * media path. A record that finds the queue full is dropped and counted; the first write error
 * (a full disk, an I/O error) ends the file and is reported once through `onError`. The bytes
 * are protocols/media/pcap.ts's. The file's MD5 is hashed as it is written, for the object store's
 * Content-MD5 when the finished file is stored as an object (recording-store.ts).
 */
import { createHash, type Hash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { pcapFileHeader } from '../../protocols/media/pcap.js';

export class RecordingFile {
  /** Records written or waiting to be written. */
  packets = 0;
  /** Records dropped: the queue was full, or the file had failed. */
  dropped = 0;
  bytes = 0;
  failed: string | null = null;
  private queue: Buffer[] = [];
  private writing: Promise<void> | null = null;
  private closed = false;
  private readonly hash: Hash = createHash('md5');

  private constructor(
    private readonly fh: FileHandle,
    private readonly maxQueued: number,
    private readonly onError: (message: string) => void,
  ) {}

  /** Create `path` (never an existing file) and write the pcap header; throws with the OS's reason. */
  static async create(path: string, maxQueued: number, onError: (message: string) => void): Promise<RecordingFile> {
    const fh = await open(path, 'wx', 0o640);
    const header = pcapFileHeader();
    try {
      await fh.writeFile(header);
    } catch (err) {
      await fh.close().catch(() => undefined);
      throw err;
    }
    const f = new RecordingFile(fh, maxQueued, onError);
    f.bytes = header.length;
    f.hash.update(header);
    return f;
  }

  /** Queue one record; false when it was dropped. */
  write(record: Buffer): boolean {
    if (this.closed || this.failed || this.queue.length >= this.maxQueued) {
      this.dropped++;
      return false;
    }
    this.queue.push(record);
    this.packets++;
    if (!this.writing) this.writing = this.drain();
    return true;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && !this.failed) {
      const batch = this.queue.splice(0);
      try {
        const { bytesWritten } = await this.fh.writev(batch);
        const want = batch.reduce((n, b) => n + b.length, 0);
        this.bytes += bytesWritten;
        if (bytesWritten !== want) throw new Error(`short write: ${bytesWritten} of ${want} bytes`);
        for (const b of batch) this.hash.update(b);
      } catch (err) {
        this.failed = (err as Error).message;
        this.dropped += batch.length + this.queue.length;
        this.packets -= batch.length + this.queue.length;
        this.queue = [];
        this.onError(this.failed);
      }
    }
    this.writing = null;
  }

  /** The MD5 (hex) of what the file holds; call once, after finish(). */
  md5(): string {
    return this.hash.digest('hex');
  }

  private finishing: Promise<void> | null = null;
  /** Write what is queued and close the file (once; later calls wait for the same end). */
  finish(): Promise<void> {
    this.closed = true;
    this.finishing ??= (async () => {
      while (this.writing) await this.writing;
      await this.fh.close().catch(() => undefined);
    })();
    return this.finishing;
  }
}
