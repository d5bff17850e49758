/**
 * Chart tarballs for the reader's tests: real ones made with the system `tar` and `gzip` in a
 * temporary directory, and hand-made tar bytes (ustar headers written here) for what tar will not
 * make or would take too long to make: a gzip bomb of 1 GiB of zeros is a header member followed by
 * 16 concatenated gzip members of 64 MiB of zeros each (gzip readers inflate every member).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const CHART_YAML = 'apiVersion: v2\nname: mychart\nversion: 0.1.0\n';

/** Write `files` (path → content) under `dir`. */
export function writeTree(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** `tar <args> -czf out -C dir names…` with the system tar; returns the archive's path. */
export function tarGz(dir: string, out: string, names: string[], args: string[] = []): string {
  execFileSync('tar', [...args, '-czf', out, '-C', dir, ...names]);
  return out;
}

export function gzip(bytes: Buffer): Buffer {
  return execFileSync('gzip', ['-c', '-n'], { input: bytes, maxBuffer: 256 * 1024 * 1024 });
}

export interface RawEntry {
  name: string;
  /** the ustar typeflag character: '0' file, '1' hard link, '2' symlink, '3'/'4' devices, '5' directory, '6' fifo */
  type?: string;
  data?: string | Buffer;
  /** the size written in the header when it differs from the data (a bomb's announced size) */
  size?: number;
  linkname?: string;
}

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, '0')}\0`;
}

/** One 512-byte ustar header. */
export function tarHeader(e: RawEntry): Buffer {
  const h = Buffer.alloc(512);
  const type = e.type ?? '0';
  const size = e.size ?? (e.data === undefined ? 0 : Buffer.byteLength(e.data));
  h.write(e.name, 0, 100, 'utf8');
  h.write(octal(type === '5' ? 0o755 : 0o644, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(0, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write(type, 156, 'ascii');
  if (e.linkname) h.write(e.linkname, 157, 100, 'utf8');
  h.write('ustar\u000000', 257, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

function padded(data: Buffer): Buffer {
  const pad = (512 - (data.byteLength % 512)) % 512;
  return Buffer.concat([data, Buffer.alloc(pad)]);
}

/** A whole tar archive of hand-made entries, with the two zero blocks at the end. */
export function rawTar(entries: RawEntry[], end = true): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    parts.push(tarHeader(e));
    if (e.data !== undefined) parts.push(padded(Buffer.from(e.data)));
  }
  if (end) parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/** A .tgz of a mychart/ whose file `mychart/zeros` announces and holds 1 GiB of zeros; about 1 MB compressed. */
export function gzipBomb(dir: string): { path: string; inflated: number } {
  const member = join(dir, 'zeros64m.gz');
  execFileSync('sh', ['-c', `head -c ${64 * 1024 * 1024} /dev/zero | gzip -9 -n > '${member}'`]);
  const size = 1024 * 1024 * 1024;
  const head = gzip(Buffer.concat([tarHeader({ name: 'mychart/Chart.yaml', data: CHART_YAML }), padded(Buffer.from(CHART_YAML)), tarHeader({ name: 'mychart/zeros', size })]));
  const zeros = execFileSync('cat', [member], { maxBuffer: 16 * 1024 * 1024 });
  const tail = gzip(Buffer.alloc(1024));
  const path = join(dir, 'bomb.tgz');
  writeFileSync(path, Buffer.concat([head, ...Array.from({ length: 16 }, () => zeros), tail]));
  return { path, inflated: 512 * 3 + size + 1024 };
}
