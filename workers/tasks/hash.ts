import { createHash } from 'node:crypto';

export interface HashTask {
  algorithm: 'md5' | 'sha1' | 'sha256';
  data: ArrayBuffer;
}

/** Digest of a buffer, hex. */
export function hash(task: HashTask): string {
  if (!task || !(task.data instanceof ArrayBuffer)) throw new TypeError('hash: data must be an ArrayBuffer');
  if (!['md5', 'sha1', 'sha256'].includes(task.algorithm)) throw new TypeError(`hash: unsupported algorithm ${String(task.algorithm)}`);
  return createHash(task.algorithm).update(new Uint8Array(task.data)).digest('hex');
}
