/**
 * A finished recording stored as an object: where the object store runs in the same daemon and
 * MEDIA_RECORDING_BUCKET is set, the closed PCAP file is PUT to
 * `<bucket>/<session_id>/<file name>` on the store's HTTP port (loopback), so it is erasure-coded
 * like any object and the gateway's recording routes can read it. The PUT carries the file's
 * length, the MD5 hashed while it was written (the store refuses the object, and keeps nothing, if
 * the bytes differ) and `application/vnd.tcpdump.pcap`. On 201 the local file is deleted; on any
 * failure (the store not running here, a 409 for an existing path, a timeout) the file stays where
 * it is and the caller reports why.
 */
import { createReadStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { request } from 'node:http';
import { basename } from 'node:path';
import { pipeline } from 'node:stream/promises';

/** How long one PUT may take before the recording is left on the local disk. */
export const RECORDING_STORE_TIMEOUT_MS = 30_000;

export interface StoredRecording {
  object_path: string;
  object_id: string;
}

export class RecordingStore {
  constructor(
    private readonly bucket: string,
    private readonly sessionId: string,
    /** The object store's HTTP port; rejects when the store does not run in this daemon. */
    private readonly storePort: () => Promise<number>,
    private readonly timeoutMs = RECORDING_STORE_TIMEOUT_MS,
  ) {}

  /** Store the closed file at `filePath` (`bytes` long, MD5 `md5`); deletes it once stored. */
  async put(filePath: string, bytes: number, md5: string): Promise<StoredRecording> {
    let port: number;
    try {
      port = await this.storePort();
    } catch (err) {
      throw new Error(`the object store does not answer in this daemon (${(err as Error).message})`);
    }
    const objectPath = `${this.bucket}/${this.sessionId}/${basename(filePath)}`;
    const objectId = await this.upload(port, objectPath, filePath, bytes, md5);
    await unlink(filePath).catch(() => undefined);
    return { object_path: objectPath, object_id: objectId };
  }

  private upload(port: number, objectPath: string, filePath: string, bytes: number, md5: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const path = '/' + objectPath.split('/').map(encodeURIComponent).join('/');
      const req = request(
        { host: '127.0.0.1', port, method: 'PUT', path, timeout: this.timeoutMs, headers: { 'Content-Length': String(bytes), 'Content-MD5': md5, 'Content-Type': 'application/vnd.tcpdump.pcap' } },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (b: Buffer) => parts.push(b));
          res.on('error', reject);
          res.on('end', () => {
            const id = res.headers['x-object-id'];
            if (res.statusCode === 201 && typeof id === 'string') return resolve(id);
            reject(new Error(`the object store answered ${res.statusCode} to PUT ${objectPath}: ${errorMessage(Buffer.concat(parts).toString('utf8'))}`));
          });
        },
      );
      // A refusal may come before the whole body went (the store answers 409 at once): the
      // answer, not the broken pipe that follows it, is what the caller hears.
      let sendError: Error | null = null;
      req.on('timeout', () => req.destroy(new Error(`no answer from the object store within ${this.timeoutMs} ms`)));
      req.on('error', (err) => (sendError ??= err));
      req.on('close', () => reject(sendError ?? new Error('the object store closed the connection without an answer')));
      pipeline(createReadStream(filePath), req).catch((err: Error) => (sendError ??= err));
    });
  }
}

/** The store's JSON error message, or the body's start. */
function errorMessage(body: string): string {
  try {
    const m = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    if (typeof m === 'string') return m;
  } catch {
    /* not JSON */
  }
  return body.slice(0, 200) || '(empty body)';
}
