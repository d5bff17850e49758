/**
 * Raw speed of loop volumes as hostd gets them: sparse files -> losetup -> mkfs.xfs -> mount,
 * then sequential write and read of one large file per volume with dd and O_DIRECT
 * (oflag=direct / iflag=direct), one volume alone and all of them at once.
 */
import { mkdirSync, mkdtempSync, openSync, closeSync, ftruncateSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Cleanup } from './cleanup.js';
import { run } from './proc.js';

const MIB = 1024 * 1024;
const TMPFS_MAGIC = 0x01021994;

export interface VolumeOptions {
  count: number;
  sizeGiB: number;
  /** open the backing files with O_DIRECT (losetup --direct-io=on): the disk, not the host page cache */
  directIo: boolean;
  /** parent of the temporary directory holding the backing files */
  parent?: string;
}

export interface Volume {
  file: string;
  dev: string;
  mnt: string;
}

export interface DdFigures {
  write_mib_s: number;
  read_mib_s: number;
}

const log = (s: string) => process.stderr.write(`${s}\n`);

export class LoopVolumes {
  readonly volumes: Volume[] = [];
  readonly dir: string;
  /** the direct-io mode losetup accepted */
  directIo = false;
  private src = '';

  private constructor(dir: string, private readonly cleanup: Cleanup) {
    this.dir = dir;
  }

  /** Makes and mounts the volumes; each step registers its own clean-up first. */
  static async create(opts: VolumeOptions, cleanup: Cleanup): Promise<LoopVolumes> {
    const parent = opts.parent ?? tmpdir();
    if (statfsSync(parent).type === TMPFS_MAGIC) throw new Error(`${parent} is tmpfs: the backing files must be on a disk (--volume-dir DIR)`);
    const dir = mkdtempSync(join(parent, 'objbench-vol-'));
    const self = new LoopVolumes(dir, cleanup);
    cleanup.add(`remove ${dir}`, () => rmSync(dir, { recursive: true, force: true }));
    self.directIo = opts.directIo;
    for (let i = 0; i < opts.count; i++) {
      const file = join(dir, `disk${i}.img`);
      const mnt = join(dir, `mnt${i}`);
      mkdirSync(mnt);
      const fd = openSync(file, 'w');
      ftruncateSync(fd, opts.sizeGiB * 1024 * MIB);
      closeSync(fd);
      let dev: string;
      try {
        dev = (await run('losetup', ['-f', '--show', `--direct-io=${self.directIo ? 'on' : 'off'}`, file])).stdout.trim();
      } catch (err) {
        if (!self.directIo) throw err;
        log(`  losetup --direct-io=on failed (${(err as Error).message.split('\n')[0]}); using --direct-io=off`);
        self.directIo = false;
        dev = (await run('losetup', ['-f', '--show', '--direct-io=off', file])).stdout.trim();
      }
      cleanup.add(`losetup -d ${dev}`, async () => void (await run('losetup', ['-d', dev])));
      await run('mkfs.xfs', ['-q', '-f', dev]);
      await run('mount', ['-o', 'noatime', dev, mnt]);
      cleanup.add(`umount ${mnt}`, async () => {
        // a dd killed by a signal may still hold the file system for a moment: retry, then detach lazily
        for (let i = 0; i < 5; i++) {
          if ((await run('umount', [mnt], { allowFail: true })).code === 0) return;
          await new Promise((r) => setTimeout(r, 500));
        }
        await run('umount', ['-l', mnt]);
      });
      self.volumes.push({ file, dev, mnt });
    }
    return self;
  }

  /**
   * A source file of random bytes in /dev/shm (so dd reads it from memory, not from a disk and
   * not from /dev/urandom, whose cost would cap the write).
   */
  async prepareSource(sizeMiB: number): Promise<void> {
    this.src = join('/dev/shm', `objbench-src-${process.pid}.bin`);
    this.cleanup.add(`remove ${this.src}`, () => rmSync(this.src, { force: true }));
    await run('dd', ['if=/dev/urandom', `of=${this.src}`, 'bs=1M', `count=${sizeMiB}`, 'status=none']);
  }

  /** Sequential O_DIRECT write then read of `sizeMiB` on the given volumes at once; aggregate MiB/s. */
  async dd(which: Volume[], sizeMiB: number, tag: string): Promise<DdFigures> {
    const bs = 4; // MiB per request
    const count = Math.ceil(sizeMiB / bs);
    const total = which.length * count * bs;
    const file = (v: Volume) => join(v.mnt, `dd-${tag}.bin`);
    let t0 = performance.now();
    await Promise.all(which.map((v) => run('dd', [`if=${this.src}`, `of=${file(v)}`, `bs=${bs}M`, `count=${count}`, 'oflag=direct', 'conv=fsync', 'status=none'])));
    const write = total / ((performance.now() - t0) / 1000);
    t0 = performance.now();
    await Promise.all(which.map((v) => run('dd', [`if=${file(v)}`, 'of=/dev/null', `bs=${bs}M`, 'iflag=direct', 'status=none'])));
    const read = total / ((performance.now() - t0) / 1000);
    for (const v of which) rmSync(file(v), { force: true });
    return { write_mib_s: write, read_mib_s: read };
  }
}
