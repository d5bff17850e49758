/**
 * The kernel-log watcher: every OBJSTORE_SYSLOG_WATCH_INTERVAL_MS (0: off) it reads the records
 * /dev/kmsg has gained (it keeps the device open: its file position is the last record read; the
 * records already there at start are skipped, they are history), keeps those of facility 0 (the
 * kernel: no user process can fake one), and for an I/O-error line of a present volume's disk
 * (protocols/objstore/kmsg.ts; a partition counts for its disk) arms a targeted full verify run of
 * that volume whose run record holds the trigger: the device, the signal `ioerror` and the line.
 * A cooldown per volume (OBJSTORE_SYSLOG_VERIFY_COOLDOWN_MS) keeps a storm of lines from arming
 * a storm of runs; it starts only when the scheduler accepted the run: refused (a freeze, another
 * run going) the trigger is kept and offered again at the next poll. Each armed run is told as a
 * warning notification. The block layer rate-limits its error lines: this is a hint that makes
 * the store look, not a counter. The `pending` signal (SMART's pending-sector count rising,
 * smart-cache.ts) comes in through offer() and is armed the same way.
 */
import { closeSync, constants as fsc, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import type { Logger } from 'pino';
import type { ActorRef } from '../../runtime/index.js';
import { diskOf, matchIoError, parseKmsgRecord } from '../../protocols/objstore/kmsg.js';
import type { VerifyTrigger } from '../../protocols/objstore/maintenance.js';
import type { SchedulerProtocol } from '../scheduler/messages.js';
import type { Notifier } from './notify.js';
import type { Volumes } from './volumes.js';

type FaultTrigger = Extract<VerifyTrigger, { kind: 'fault' }>;

export interface KmsgWatchOptions {
  volumes: Volumes;
  scheduler: ActorRef<SchedulerProtocol>;
  notifier: Notifier;
  log: Logger;
  intervalMs: number;
  cooldownMs: number;
  /** the kernel log device (a test may point it elsewhere) */
  path?: string;
}

export class KmsgWatch {
  private readonly o: KmsgWatchOptions;
  private fd: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  /** volume id → when its last run was armed */
  private readonly armedAt = new Map<number, number>();
  /** volume id → a trigger the scheduler did not accept yet */
  private readonly waiting = new Map<number, FaultTrigger>();
  private readonly buf = Buffer.alloc(16 * 1024);
  /** runs armed (for the log and the tests) */
  armed = 0;

  constructor(o: KmsgWatchOptions) {
    this.o = o;
  }

  start(): void {
    if (this.o.intervalMs <= 0) {
      this.o.log.info('kernel-log watcher off (OBJSTORE_SYSLOG_WATCH_INTERVAL_MS=0)');
      return;
    }
    try {
      this.fd = openSync(this.o.path ?? '/dev/kmsg', fsc.O_RDONLY | fsc.O_NONBLOCK);
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message }, 'kernel-log watcher: cannot open /dev/kmsg; I/O errors in the kernel log arm no verify run');
      return;
    }
    this.drain(); // what is there already is history
    this.timer = setInterval(() => void this.poll(), this.o.intervalMs);
    this.timer.unref();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  /** Every record the kernel log gained since the last read (one read() gives one record). */
  private drain(): string[] {
    const out: string[] = [];
    for (;;) {
      if (this.fd === null) return out;
      let n: number;
      try {
        n = readSync(this.fd, this.buf, 0, this.buf.length, null);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') continue; // records were overwritten before we read them: go on from the oldest kept
        if (code !== 'EAGAIN') this.o.log.warn({ err: (err as Error).message }, 'kernel-log watcher: reading /dev/kmsg failed');
        return out;
      }
      if (n <= 0) return out;
      out.push(this.buf.toString('utf8', 0, n));
    }
  }

  async poll(now = Date.now()): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      for (const raw of this.drain()) {
        const rec = parseKmsgRecord(raw);
        if (!rec || rec.facility !== 0) continue;
        const hit = matchIoError(rec.message);
        if (!hit) continue;
        const disk = diskOf(hit.device);
        const vol = this.o.volumes.presentDisks().find((d) => basename(d.device) === disk);
        if (!vol) {
          this.o.log.debug({ device: hit.device, line: rec.message }, 'kernel-log watcher: an I/O error of a device that is not a volume');
          continue;
        }
        this.o.log.warn({ volumeId: vol.id, device: hit.device, form: hit.form, line: rec.message }, 'kernel log: I/O error on a volume\'s disk');
        this.queue(vol.id, { kind: 'fault', device: hit.device, signal: 'ioerror', detail: rec.message }, now);
      }
      for (const [id, trigger] of [...this.waiting]) await this.arm(id, trigger, now);
    } finally {
      this.polling = false;
    }
  }

  /**
   * A signal from elsewhere: SMART's pending-sector count of a volume's disk rose (smart-cache.ts).
   * Armed now, under the same cooldown as the kernel's lines.
   */
  async offer(volumeId: number, trigger: FaultTrigger, now = Date.now()): Promise<void> {
    if (this.o.intervalMs <= 0) return; // the watcher is off: its signals arm nothing
    this.queue(volumeId, trigger, now);
    const t = this.waiting.get(volumeId);
    if (t) await this.arm(volumeId, t, now);
  }

  private queue(volumeId: number, trigger: FaultTrigger, now: number): void {
    const last = this.armedAt.get(volumeId);
    if (last !== undefined && now - last < this.o.cooldownMs) return;
    if (!this.waiting.has(volumeId)) this.waiting.set(volumeId, trigger);
  }

  private async arm(volumeId: number, trigger: FaultTrigger, now: number): Promise<void> {
    let reply;
    try {
      reply = await this.o.scheduler.request({ type: 'verifyStart', volumeIds: [volumeId], mode: 'full', trigger }, { timeoutMs: 30_000 });
    } catch (err) {
      this.waiting.delete(volumeId);
      this.o.log.warn({ volumeId, err: (err as Error).message }, 'kernel-log watcher: the verify run was refused');
      return;
    }
    if (!reply.accepted) {
      this.o.log.info({ volumeId, reason: reply.reason }, 'kernel-log watcher: verify run not accepted now; offered again at the next poll');
      return;
    }
    this.waiting.delete(volumeId);
    this.armedAt.set(volumeId, now);
    this.armed++;
    this.o.log.warn({ volumeId, trigger, deferred: reply.deferred ?? false }, 'kernel-log watcher: targeted verify run armed');
    const what = trigger.signal === 'ioerror' ? `The kernel logged an I/O error of ${trigger.device}` : `SMART of ${trigger.device} reports more pending sectors`;
    this.o.notifier.notify({
      severity: 'warning',
      key: `kernlog:${volumeId}:${trigger.signal}`,
      title: trigger.signal === 'ioerror' ? `Kernel I/O error on volume ${volumeId}: verify run started` : `Pending sectors rising on volume ${volumeId}: verify run started`,
      body: `${what} (volume ${volumeId}): "${trigger.detail}". A full verify run of the volume ${reply.deferred ? 'is queued behind the running rebalance' : 'started'} (GET /$/verify-runs shows it with this trigger); repair rebuilds what it finds. Check the disk (GET /$/volumes/${volumeId}: smartInfo).`,
    });
  }
}
