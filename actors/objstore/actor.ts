/**
 * The object store actor: metadata (LMDB), the volumes, and the HTTP object and management API.
 * On its own thread: it receives every request body and computes every PUT's MD5.
 */
import { defineActor } from '../../runtime/index.js';
import { openEnvironment } from '../../runtime/checkpoint/store.js';
import { closeApp, listen, loadUws } from '../../runtime/http/uws.js';
import { handleManage } from './http/manage.js';
import { handleObject } from './http/objects.js';
import type { ObjstoreArgs, ObjstoreInfo, ObjstoreProtocol } from './messages.js';
import { Metadata } from './metadata.js';
import { BufferPool } from './store/buffers.js';
import type { StoreContext } from './store/context.js';
import { Volumes } from './volumes.js';
import { reportOn } from './metrics.js';
import { SCHEDULER_ID, type SchedulerProtocol } from '../scheduler/messages.js';
import { coders } from './store/coders.js';
import { attachDemoFiles, createDemoFiles, demoFiles } from './demo.js';

interface Live {
  info: ObjstoreInfo;
}

export default defineActor<ObjstoreProtocol, Live, ObjstoreArgs>({
  kind: 'objstore',
  async init(ctx) {
    const a = ctx.args;
    const meta = new Metadata(openEnvironment(a.stateDir), { healthFaultThreshold: a.healthFaultThreshold });
    const volumes = new Volumes({
      meta,
      log: ctx.log,
      stateDir: a.stateDir,
      ioTimeoutMs: a.ioTimeoutMs,
      maxInflight: a.volumeMaxInflight,
      ref: (id) => ctx.ref(id),
      spawn: (spec) => ctx.spawn(spec),
      stop: (id) => ctx.stop(id),
    });
    if (a.demoVolumes) await attachDemoFiles(a.stateDir);
    let booted = await volumes.boot();
    if (a.demoVolumes && volumes.records(true).length === 0) {
      const devices = await createDemoFiles(a.stateDir, a.demoVolumeMiB);
      for (const blockPath of devices) await volumes.provision({ blockPath, wipe: Date.now(), label: 'demo' });
      booted = { present: volumes.records(false).map((v) => v.id), missing: [] };
      ctx.log.warn({ devices, files: demoFiles(a.stateDir) }, `no volume was registered: made ${devices.length} demo volumes from sparse files in the state directory (for trying the store out, not for data you keep)`);
    }
    const store: StoreContext = {
      meta,
      log: ctx.log,
      settings: { ioTimeoutMs: a.ioTimeoutMs, maxObjectBytes: a.maxObjectBytes, bodyIdleTimeoutMs: a.bodyIdleTimeoutMs, maxChunkSize: a.maxChunkSize, stripesInFlight: a.stripesInFlight },
      volume: (id) => volumes.ref(id),
      writable: () => volumes.writable(),
      runTask: (name, arg, transfer) => ctx.runTask(name, arg, transfer),
      stripeCoder: coders(a.stripeCoders, (id) => ctx.ref(id)),
      pendingPaths: new Set(),
      buffers: new BufferPool(),
    };
    await cleanUpIntents(store, booted.present);
    reportOn({ meta, volumes });
    ctx.onCleanup(() => reportOn(null));
    const app = loadUws().App();
    const scheduler = ctx.ref<SchedulerProtocol>(SCHEDULER_ID);
    app.any('/$/*', (res, req) => handleManage(store, volumes, scheduler, res, req));
    app.any('/*', (res, req) => handleObject(store, res, req));
    const { socket, port } = await listen(app, a.host, a.port);
    ctx.onCleanup(() => closeApp(app, socket));
    ctx.setInterval(() => void volumes.refreshCapacity(), 5000);
    ctx.log.info({ port, present: booted.present, missing: booted.missing }, 'object store listening');
    return { info: { port, volumes: booted, instanceId: volumes.instanceId } };
  },
  handlers: {
    info: (_m, ctx) => ctx.state.info,
  },
});

/**
 * PUTs that did not finish (a crash, a kill -9): remove their slices, then their intents; and
 * sweep every volume's temp files (a PUT writes its temp files while its intent is flushed,
 * so a crash can leave temp files that no intent names).
 */
async function cleanUpIntents(store: StoreContext, volumeIds: number[]): Promise<void> {
  await Promise.allSettled(volumeIds.map((v) => store.volume(v)?.request({ type: 'purge', objectIds: [] }, { timeoutMs: 120_000 })));
  for (const { key, value } of store.meta.intents.getRange()) {
    if (store.meta.objects.get(key)) {
      await store.meta.intents.remove(key);
      continue;
    }
    const results = await Promise.allSettled(
      value.volumes.map(async (v, index) => {
        const ref = store.volume(v);
        if (!ref) throw new Error(`volume ${v} not present`);
        await ref.request({ type: 'abort', objectId: key, index });
        await ref.request({ type: 'delete', objectId: key, index });
      }),
    );
    if (results.every((r) => r.status === 'fulfilled')) {
      await store.meta.intents.remove(key);
      store.log.info({ objectId: key, path: value.path }, 'removed the slices of an unfinished PUT');
    }
  }
}
