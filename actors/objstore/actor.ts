/**
 * The object store actor: metadata (LMDB), the volumes, and the HTTP object and management API.
 * On its own thread: it receives every request body and computes every PUT's MD5.
 *
 * It checkpoints nothing (the metadata is in LMDB, the slices on the volumes): its state is null.
 * Its live value (made in `open`, closed by the runtime when the instance ends) is the data path
 * (store), the volumes, the HTTP server (http/server.ts), and what it answers to `info`
 * (the port it listens on and the volumes it found: facts of this instance's resources, which a
 * restarted instance finds anew, so they are never restored from a checkpoint).
 */
import { defineActor, type ActorContext } from '../../runtime/index.js';
import { openEnvironment } from '../../runtime/checkpoint/store.js';
import type { Server } from 'node:http';
import { handleManage } from './http/manage.js';
import { handleObject } from './http/objects.js';
import { closeFront, createFront, listenFront } from './http/server.js';
import type { ObjstoreArgs, ObjstoreInfo, ObjstoreProtocol } from './messages.js';
import { BufferPool, coders, Metadata, removeSlices, type StoreContext } from './store/index.js';
import { busGroup, Volumes } from './volumes.js';
import { Journal, type JournalTarget } from './journal/journal.js';
import { Snapshots } from './journal/snapshots.js';
import { reportOn } from './metrics.js';
import { SCHEDULER_ID, type SchedulerProtocol } from '../scheduler/messages.js';
import { keyNotices, Notifier, unhealthyNotice } from './notify.js';
import { Hotplug } from './devices.js';
import { KmsgWatch } from './kmsg-watch.js';
import { Identify } from '../volume/identify.js';
import { SMART_REFRESH_MS } from './smart-cache.js';
import { basename } from 'node:path';
import { attachDemoFiles, createDemoFiles, demoFiles } from './demo.js';
import { mountList, mountRead, mountStat, mountStatMany } from './mount-source.js';

/** What the store holds while it runs. close() stops serving HTTP and stops reporting metrics. */
class Running {
  private closed = false;
  constructor(
    readonly store: StoreContext,
    readonly volumes: Volumes,
    private readonly server: Server,
    readonly info: ObjstoreInfo,
    readonly notifier: Notifier,
    readonly hotplug: Hotplug,
    readonly kmsg: KmsgWatch,
    readonly identify: Identify,
    readonly journal: Journal | null,
    readonly snapshots: Snapshots,
  ) {}

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.hotplug.close();
    this.kmsg.close();
    this.identify.close();
    closeFront(this.server);
    reportOn(null);
    await this.journal?.close();
  }
}

/** Open the metadata and the volumes (making demo volumes if asked), clean up after a crash, listen. */
async function start(ctx: ActorContext<null, ObjstoreArgs>): Promise<Running> {
  const args = ctx.args;
  const notifier = new Notifier({ log: ctx.log, webhookUrl: args.chatWebhookUrl });
  const meta = new Metadata(openEnvironment(args.stateDir), { healthFaultThreshold: args.healthFaultThreshold, log: ctx.log, onUnhealthy: (v) => notifier.notify(unhealthyNotice(v)) });
  const volumes = new Volumes({
    meta,
    log: ctx.log,
    stateDir: args.stateDir,
    ioTimeoutMs: args.ioTimeoutMs,
    maxInflight: args.volumeMaxInflight,
    encryptNewVolumes: args.encryptNewVolumes,
    ref: (id) => ctx.ref(id),
    spawn: (spec) => ctx.spawn(spec),
    stop: (id) => ctx.stop(id),
  });
  if (args.demoVolumes) await attachDemoFiles(args.stateDir);
  let booted = await volumes.boot();
  if (args.demoVolumes && volumes.records(true).length === 0) {
    const devices = await createDemoFiles(args.stateDir, args.demoVolumeMiB);
    for (const blockPath of devices) await volumes.provision({ blockPath, wipe: Date.now(), label: 'demo' });
    booted = { present: volumes.records(false).map((v) => v.id), missing: [] };
    ctx.log.warn({ devices, files: demoFiles(args.stateDir) }, `no volume was registered: made ${devices.length} demo volumes from sparse files in the state directory (for trying the store out, not for data you keep)`);
  }
  const store: StoreContext = {
    meta,
    log: ctx.log,
    settings: { ioTimeoutMs: args.ioTimeoutMs, maxObjectBytes: args.maxObjectBytes, allowedOrigins: args.allowedOrigins, bodyIdleTimeoutMs: args.bodyIdleTimeoutMs, sendIdleTimeoutMs: args.sendIdleTimeoutMs, maxChunkSize: args.maxChunkSize, stripesInFlight: args.stripesInFlight },
    volume: (id) => volumes.ref(id),
    writable: () => volumes.writable(),
    unwritable: () => volumes.unwritable(),
    runTask: (name, arg, transfer) => ctx.runTask(name, arg, transfer),
    stripeCoder: coders(args.stripeCoders, (id) => ctx.ref(id)),
    pendingPaths: new Set(),
    buffers: new BufferPool(),
  };
  for (const n of keyNotices(volumes.keys.problem, volumes.locked)) notifier.notify(n);
  await cleanUpIntents(store, booted.present);
  const stale = await meta.dropStaleFaults();
  if (stale) ctx.log.info({ dropped: stale }, 'dropped the faults of objects that no longer exist');
  const journal = args.journal ? await Journal.open({ log: ctx.log, replicas: args.journalReplicas, targets: () => journalTargets(volumes), registered: () => volumes.records(false).length }) : null;
  meta.journal = journal;
  if (journal) volumes.onRelease = (id) => journal.release(id);
  const snapshots = new Snapshots({ store, journal, disks: () => volumes.presentDisks(), log: ctx.log });
  const scheduler = ctx.ref<SchedulerProtocol>(SCHEDULER_ID);
  const identify = new Identify(ctx.log);
  const hotplug = new Hotplug({ volumes, notifier, log: ctx.log, scanIntervalMs: args.deviceScanIntervalMs, disableUdev: args.disableUdev });
  const server = createFront(
    (r, url, query) => (url.startsWith('/$/') ? handleManage(store, volumes, scheduler, r, url, query, { notifier, hotplug, identify, journal, snapshots }) : handleObject(store, r, url, query)),
    { maxHeaderBytes: args.maxHeaderBytes, headersTimeoutMs: args.headersTimeoutMs, keepAliveTimeoutMs: args.keepAliveTimeoutMs, bodyIdleTimeoutMs: args.bodyIdleTimeoutMs },
  );
  let port: number;
  try {
    port = await listenFront(server, args.host, args.port);
  } catch (err) {
    closeFront(server);
    await journal?.close();
    throw err;
  }
  await hotplug.start();
  const kmsg = new KmsgWatch({ volumes, scheduler, notifier, log: ctx.log, intervalMs: args.syslogWatchIntervalMs, cooldownMs: args.syslogVerifyCooldownMs });
  kmsg.start();
  reportOn({ meta, volumes });
  ctx.log.info({ port, present: booted.present, missing: booted.missing }, 'object store listening');
  return new Running(store, volumes, server, { port, volumes: booted, instanceId: volumes.instanceId }, notifier, hotplug, kmsg, identify, journal, snapshots);
}

export default defineActor<ObjstoreProtocol, null, ObjstoreArgs, Running>({
  kind: 'objstore',
  // The mount's reads wait on the disks: several at once (a read-ahead, other files).
  concurrency: 64,
  init: () => null,
  async open(ctx) {
    const running = await start(ctx);
    ctx.setInterval(() => void running.volumes.refreshCapacity(), 5000);
    const readSmart = async () => {
      const disks = running.volumes.presentDisks();
      for (const rise of await running.volumes.smart.refresh(disks.map((d) => d.device))) {
        const vol = disks.find((d) => d.device === rise.device);
        if (vol) await running.kmsg.offer(vol.id, { kind: 'fault', device: basename(rise.device), signal: 'pending', detail: `SMART Current_Pending_Sector rose from ${rise.from} to ${rise.to}` });
      }
    };
    const readSmartLogged = () => void readSmart().catch((err: Error) => ctx.log.warn({ err: err.message }, 'reading SMART data failed'));
    readSmartLogged();
    ctx.setInterval(readSmartLogged, SMART_REFRESH_MS);
    const everyMs = ctx.args.snapshotIntervalMinutes * 60_000;
    if (everyMs > 0) ctx.setInterval(() => void snapshotIfDue(running, everyMs).catch((err: Error) => ctx.log.warn({ err: err.message }, 'the scheduled snapshot check failed')), Math.min(60_000, everyMs));
    return running;
  },
  handlers: {
    info: (_msg, _ctx, running) => running.info,
    notify: (msg, _ctx, running) => running.notifier.notify(msg.notification),
    mountStat: (msg, _ctx, running) => mountStat(running.store, msg.path),
    mountList: (msg, _ctx, running) => mountList(running.store, msg.path),
    mountStatMany: (msg, _ctx, running) => mountStatMany(running.store, msg.path, msg.names),
    mountRead: (msg, _ctx, running) => mountRead(running.store, msg),
    journalAppend: async (msg, _ctx, running) => (running.journal ? await running.journal.append(msg.op) : 0),
    journalSettle: (msg, _ctx, running) => running.journal?.settle(msg.seq),
  },
});

/**
 * The volumes that may carry the journal: present, not deleted, healthy and writable first (by
 * id within each kind, so the choice is stable across restarts).
 */
function journalTargets(volumes: Volumes): JournalTarget[] {
  const recs = new Map(volumes.records(false).map((r) => [r.id, r]));
  const rank = (id: number) => {
    const r = recs.get(id);
    return !r ? 2 : r.isHealthy && !r.isReadOnly ? 0 : 1;
  };
  return volumes
    .presentDisks()
    .filter((d) => recs.has(d.id))
    .sort((a, b) => rank(a.id) - rank(b.id) || a.id - b.id)
    .map((d) => ({ id: d.id, mountPoint: d.mountPoint, busGroup: busGroup(d.device) }));
}

/** Take a scheduled snapshot when the newest good one is older than the interval (or there is none). */
async function snapshotIfDue(running: Running, everyMs: number): Promise<void> {
  if (running.snapshots.running || !running.volumes.presentDisks().length) return;
  const newest = (await running.snapshots.known())[0];
  if (newest && Date.now() - newest.takenAt < everyMs) return;
  await running.snapshots.take().done;
}

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
    const left = await removeSlices(store, key, value.volumes, { writing: true });
    if (!left.length) {
      await store.meta.intents.remove(key);
      store.log.info({ objectId: key, path: value.path }, 'removed the slices of an unfinished PUT');
    }
  }
}
