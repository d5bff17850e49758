/**
 * Random bytes for tags, branches and Call-IDs, cut from a pooled buffer refilled 4 KiB at a
 * time: the SIP server makes a tag for every server transaction, and one `randomBytes(8)` a
 * message (a fresh buffer and a call into the CSPRNG each) showed up at ~3 % of its thread at
 * 700 calls/s (docs/gateway.md "Calls per second"). Same CSPRNG, fewer calls. The bytes are a
 * view into the pool: use them at once (protocols/sip's newTag/newBranch/newCallId encode them
 * to text), never keep them.
 */
import { randomFillSync } from 'node:crypto';

const POOL = Buffer.alloc(4096);
let used = POOL.length;

export function randomBytes(n: number): Buffer {
  if (n > POOL.length) return randomFillSync(Buffer.alloc(n));
  if (used + n > POOL.length) {
    randomFillSync(POOL);
    used = 0;
  }
  const out = POOL.subarray(used, used + n);
  used += n;
  return out;
}
