/**
 * Opening a local file for a file endpoint: where it may be (only under the media directory),
 * what it may be (a regular file no larger than the size cap), and its probe and decode, all
 * before `endpoint.create_file` answers. Every refusal is a message naming what was wrong; the
 * caller turns it into ENDPOINT_ERROR and creates nothing.
 *
 * Decisions:
 * - `source` is a path relative to the media directory, or an absolute path inside it. Both
 *   the directory and the file are resolved with realpath, so `..` and symlinks that lead
 *   outside the directory are refused.
 * - The file is opened with O_NONBLOCK and checked with fstat on the open descriptor: a FIFO,
 *   a device or a directory (even one swapped in after the path check) is refused without a
 *   blocking read; a file over the cap is refused before a byte of it is read.
 * - The whole file is read (asynchronously: the thread's other sessions keep their media
 *   clock) and decoded to mono 16-bit PCM at its own rate; the endpoint plays from memory.
 * - A file starting with `OggS` is Ogg Opus (opus-file.ts, 48 kHz); anything else is probed
 *   as WAV.
 */
import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { isAbsolute, resolve, sep } from 'node:path';
import { looksLikeOgg } from '../../protocols/media/codecs/ogg.js';
import { decodeWav, probeWav } from '../../protocols/media/codecs/wav.js';
import { decodeOggOpus } from './opus-file.js';

export interface LoadedFile {
  pcm: Int16Array;
  /** What the endpoint needs of the probe: the PCM's rate and the length. */
  info: { sampleRate: number; durationMs: number };
  /** The real path that was opened (a URL source: the URL's origin). */
  path: string;
}

export type LoadOutcome = { ok: true; file: LoadedFile } | { ok: false; message: string };

/** A whole file's bytes (local or downloaded) probed and decoded; `label` names it in messages. */
export function decodeFile(file: Uint8Array, label: string, path: string, gainDb: number): LoadOutcome {
  if (looksLikeOgg(file)) {
    const opus = decodeOggOpus(file, gainDb);
    if (!opus.ok) return { ok: false, message: `source ${label}: ${opus.message}` };
    return { ok: true, file: { pcm: opus.pcm, info: opus.info, path } };
  }
  const probe = probeWav(file);
  if (!probe.ok) return { ok: false, message: `source ${label}: ${probe.message}` };
  return { ok: true, file: { pcm: decodeWav(file, probe.info, gainDb), info: probe.info, path } };
}

export async function loadLocalFile(dir: string, source: string, maxBytes: number, gainDb: number): Promise<LoadOutcome> {
  const bad = (message: string) => ({ ok: false as const, message });
  if (source.includes('\0')) return bad('source contains a NUL character');
  let root: string;
  try {
    root = await realpath(dir);
  } catch (err) {
    return bad(`the media directory cannot be used: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const wanted = isAbsolute(source) ? source : resolve(root, source);
  let path: string;
  try {
    path = await realpath(wanted);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return bad(code === 'ENOENT' ? `source ${source}: no such file in the media directory` : `source ${source}: ${code ?? (err as Error).message}`);
  }
  if (!path.startsWith(root + sep)) return bad(`source ${source} is outside the media directory`);
  let fh;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    return bad(`source ${source}: cannot be opened (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return bad(`source ${source} is not a regular file`);
    if (st.size > maxBytes) return bad(`source ${source} is ${st.size} bytes; the limit is ${maxBytes} (MEDIA_FILE_MAX_BYTES)`);
    const bytes = new Uint8Array(st.size);
    let got = 0;
    while (got < bytes.length) {
      const { bytesRead } = await fh.read(bytes, got, bytes.length - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return decodeFile(bytes.subarray(0, got), source, path, gainDb);
  } catch (err) {
    return bad(`source ${source}: read failed (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  } finally {
    await fh.close().catch(() => undefined);
  }
}
