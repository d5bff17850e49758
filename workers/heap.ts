/**
 * V8 heap sizing for the threads the daemon starts, set before the first Worker exists (a V8 flag
 * is read when an isolate is made, so it reaches every worker thread created after this runs).
 *
 * Why: Node's HTTP server reads each socket into a fresh 64 KiB buffer, and V8 counts those
 * buffers against an old generation that starts at a few MiB on a small thread. A 64 MiB upload
 * then set off a full mark-compact every ~10-20 MiB: ~0.75 ms of GC per MiB on the object store's
 * HTTP thread, which made one PUT stream ~15 % slower than the uWebSockets.js front it replaced
 * (measured: docs/object-store.md "Before and after the switch"). Starting the old generation's
 * limit at 128 MiB removes that (GC 759 → 62 ms over 512 MiB of PUTs) for ~45 MiB more resident
 * memory in the daemon. An operator's own --initial-old-space-size (NODE_OPTIONS) is kept.
 */
import { setFlagsFromString } from 'node:v8';

const INITIAL_OLD_SPACE_MIB = 128;

const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((a) => a.startsWith('--initial-old-space-size') || a.startsWith('--initial_old_space_size'));
if (!given) setFlagsFromString(`--initial-old-space-size=${INITIAL_OLD_SPACE_MIB}`);
export {};
