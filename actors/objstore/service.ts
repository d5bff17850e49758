/** The object store as a service of the daemon: its settings and its supervision tree. */
import { bool, int } from '../../runtime/config/settings.js';
import type { ServiceDefinition } from '../../runtime/service.js';
import { DEFAULT_CHUNK_SIZE } from '../../protocols/objstore/layout.js';
import { OBJSTORE_ID, type ObjstoreArgs } from './messages.js';

export const objstoreSettings = {
  ioTimeoutMs: int({ env: 'OBJSTORE_IO_TIMEOUT_MS', flag: 'objstore-io-timeout-ms', description: 'A disk operation slower than this fails (the disk counts as not answering)', min: 100, max: 600_000, default: 10_000 }),
  bodyIdleTimeoutMs: int({ env: 'OBJSTORE_BODY_IDLE_TIMEOUT_MS', flag: 'objstore-body-idle-timeout-ms', description: 'A PUT body that stalls this long is answered 455 and dropped', min: 100, max: 600_000, default: 30_000 }),
  maxObjectBytes: int({ env: 'OBJSTORE_MAX_OBJECT_BYTES', flag: 'objstore-max-object-bytes', description: 'Largest object accepted (413 above)', min: 1, max: Number.MAX_SAFE_INTEGER, default: 5 * 1024 ** 4 }),
  demoVolumes: bool({ env: 'OBJSTORE_DEMO_VOLUMES', flag: 'demo-volumes', description: 'With no volume registered, make six sparse files in the state directory, attach them as loop devices and provision them (npm start does this)', default: false }),
  demoVolumeMiB: int({ env: 'OBJSTORE_DEMO_VOLUME_MIB', flag: 'demo-volume-mib', description: 'Size of each demo volume file (sparse; XFS needs at least 300 MiB)', min: 320, max: 1024 * 1024, default: 4096 }),
};

export interface ObjstoreValues {
  ioTimeoutMs: number;
  bodyIdleTimeoutMs: number;
  maxObjectBytes: number;
  demoVolumes: boolean;
  demoVolumeMiB: number;
}

export const OBJSTORE_MODULE = new URL('./actor.js', import.meta.url).href;

/** The object store actor's arguments; the daemon binds port 80, tests an ephemeral port. */
export function objstoreArgs(stateDir: string, values: Partial<ObjstoreValues> & Pick<ObjstoreValues, 'ioTimeoutMs' | 'bodyIdleTimeoutMs' | 'maxObjectBytes'>, port = 80, host = '0.0.0.0'): ObjstoreArgs {
  return {
    host,
    port,
    stateDir,
    ioTimeoutMs: values.ioTimeoutMs,
    bodyIdleTimeoutMs: values.bodyIdleTimeoutMs,
    maxObjectBytes: values.maxObjectBytes,
    demoVolumes: values.demoVolumes ?? false,
    demoVolumeMiB: values.demoVolumeMiB ?? 4096,
    maxChunkSize: DEFAULT_CHUNK_SIZE,
    stripesInFlight: 8,
    volumeMaxInflight: 16,
  };
}

export const service: ServiceDefinition = {
  name: 'objstore',
  settings: objstoreSettings,
  supervisor({ settings, values }) {
    return {
      id: 'objstore.supervisor',
      children: [{ id: OBJSTORE_ID, module: OBJSTORE_MODULE, args: objstoreArgs(settings.stateDir, values as unknown as ObjstoreValues), shutdownMs: 30_000 }],
    };
  },
};
