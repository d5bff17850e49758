/**
 * Where slice files live on a volume:
 *
 *   <mountPoint>/objstore/slices/<xx>/<24 hex>.<index>        committed slice
 *   <mountPoint>/objstore/slices/<xx>/<24 hex>.<index>.tmp    being written (visible at commit)
 *
 * `xx` is the last byte of the object id in hex (its random part), spreading slices over 256
 * directories.
 */
import { join } from 'node:path';
import { SERVICE_DIR } from '../../protocols/objstore/identity.js';
import { SLICES_DIR } from './disks.js';

export const TMP_SUFFIX = '.tmp';
const ID_RE = /^\$[0-9a-fA-F]{24}$/;

/** Throws a message (for BAD_REQUEST) unless objectId and index name a slice. */
export function sliceRefProblem(objectId: unknown, index: unknown): string | null {
  if (typeof objectId !== 'string' || !ID_RE.test(objectId)) return `object id must be '$' and 24 hex characters, got ${JSON.stringify(objectId)}`;
  if (!Number.isSafeInteger(index) || (index as number) < 0 || (index as number) > 255) return `slice index must be an integer from 0 to 255, got ${JSON.stringify(index)}`;
  return null;
}

export class SlicePaths {
  readonly root: string;
  constructor(mountPoint: string) {
    this.root = join(mountPoint, SERVICE_DIR, SLICES_DIR);
  }
  /** Directory of an object's slices. */
  dir(objectId: string): string {
    return join(this.root, objectId.slice(-2).toLowerCase());
  }
  /** File name stem of a slice: '<24hex>.<index>'. */
  name(objectId: string, index: number): string {
    return `${objectId.slice(1).toLowerCase()}.${index}`;
  }
  final(objectId: string, index: number): string {
    return join(this.dir(objectId), this.name(objectId, index));
  }
  temp(objectId: string, index: number): string {
    return this.final(objectId, index) + TMP_SUFFIX;
  }
}
