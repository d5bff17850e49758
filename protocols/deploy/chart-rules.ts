/**
 * What a chart tarball may contain, checked entry by entry from the tar headers alone, so that a
 * reader can refuse a bad archive before it writes anything (actors/deployer/chart-reader.ts feeds
 * it). The rules:
 *
 * - entry names are normalised: './' and empty components dropped ('./mychart//a' → 'mychart/a'),
 *   a trailing '/' of a directory dropped; a directory entry that is the root itself ('./') is
 *   allowed and ignored; names come after PAX and GNU long-name headers are applied (tar-stream does);
 * - refused names: empty, absolute ('/etc/x', 'C:x'), any '..' component, a '.git' component in
 *   any case (the chart is committed to git, which refuses such paths: a chart must not smuggle a
 *   repository or its hooks), a backslash, control characters, longer than maxPathBytes or deeper
 *   than maxDepth;
 * - only regular files and directories: symbolic links, hard links, character and block devices,
 *   fifos, contiguous files and unknown types are refused;
 * - everything sits under one top-level directory (a file at the top level, or a second top-level
 *   directory, is refused), and that directory holds a regular file `Chart.yaml` (exactly so
 *   named: Helm's loader looks for nothing else);
 * - no two entries may name the same path, nor paths that are equal after Unicode NFC
 *   normalisation and lower-casing (they would overwrite each other on a case-insensitive or
 *   normalising file system, and in git on such a checkout); a path may not be both a file and a
 *   directory ('a/b' a file and 'a/b/c' an entry);
 * - at most maxEntries entries, no file above maxFileBytes (Helm's own loader limit), at most
 *   maxUnpackedBytes of file content in all; the reader also caps inflated bytes (maxInflatedBytes)
 *   so a gzip bomb stops early even where no header is ever complete.
 *
 * Every refusal is 400 BAD_CHART with a message naming the entry and the rule. Pure.
 */
import { refuse } from './errors.js';

export interface ChartLimits {
  maxEntries: number;
  /** one file's size */
  maxFileBytes: number;
  /** all files' sizes together */
  maxUnpackedBytes: number;
  /** bytes the gunzip may produce (tar headers and padding included) */
  maxInflatedBytes: number;
  maxPathBytes: number;
  maxDepth: number;
}

export const CHART_LIMITS: ChartLimits = {
  maxEntries: 10_000,
  maxFileBytes: 5 * 1024 * 1024,
  maxUnpackedBytes: 32 * 1024 * 1024,
  // the content, plus a header block and at most a block of padding per entry, plus slack for PAX records
  maxInflatedBytes: 32 * 1024 * 1024 + 10_000 * 1024 + 1024 * 1024,
  maxPathBytes: 1024,
  maxDepth: 32,
};

/** Largest upload the front accepts for a chart (compressed), before any of these rules: 413 above it. */
export const MAX_CHART_UPLOAD_BYTES = 10 * 1024 * 1024;

/** The name of the chart's metadata file, directly in the top-level directory. */
export const CHART_YAML = 'Chart.yaml';

/** The part of a tar header the rules read (tar-stream's Header has these). */
export interface EntryHeader {
  name: string;
  type: string | null;
  size: number;
}

export interface ChartEntry {
  /** normalised, top-level directory included */
  path: string;
  type: 'file' | 'directory';
  size: number;
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  symlink: 'a symbolic link',
  link: 'a hard link',
  'character-device': 'a character device',
  'block-device': 'a block device',
  fifo: 'a fifo',
  'contiguous-file': 'a contiguous file',
};

const bad = (message: string): never => refuse(400, 'BAD_CHART', message);

function shown(name: string): string {
  return JSON.stringify(name.length > 120 ? `${name.slice(0, 120)}…` : name);
}

/** The normalised path of an entry name ('' for the root), or a refusal naming the entry. */
export function normaliseEntryPath(name: string, limits: Pick<ChartLimits, 'maxPathBytes' | 'maxDepth'> = CHART_LIMITS): string {
  if (name === '') return bad('an entry has an empty name');
  if (/[\u0000-\u001f\u007f]/.test(name)) return bad(`entry ${shown(name)} has a control character in its name`);
  if (name.includes('\\')) return bad(`entry ${shown(name)} has a backslash in its name`);
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return bad(`entry ${shown(name)} has an absolute path`);
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) return bad(`entry ${shown(name)} has a '..' component`);
  if (parts.some((p) => p.toLowerCase() === '.git')) return bad(`entry ${shown(name)} has a '.git' component`);
  const path = parts.join('/');
  if (Buffer.byteLength(path, 'utf8') > limits.maxPathBytes) return bad(`entry ${shown(name)} has a path longer than ${limits.maxPathBytes} bytes`);
  if (parts.length > limits.maxDepth) return bad(`entry ${shown(name)} is nested deeper than ${limits.maxDepth} levels`);
  return path;
}

function foldKey(path: string): string {
  return path.normalize('NFC').toLowerCase();
}

/** Checks the entries of one archive in order; `finish` checks what only the whole archive shows. */
export class ChartChecker {
  private count = 0;
  private unpacked = 0;
  private top: string | null = null;
  private hasChartYaml = false;
  /** fold key → path as first seen, for files and for directories (explicit or implied) */
  private readonly files = new Map<string, string>();
  private readonly dirs = new Map<string, string>();
  private readonly explicitDirs = new Set<string>();
  readonly entries: ChartEntry[] = [];

  constructor(readonly limits: ChartLimits = CHART_LIMITS) {}

  /** Check one header; returns the entry, or null for the ignored root directory entry. */
  entry(h: EntryHeader): ChartEntry | null {
    this.count++;
    if (this.count > this.limits.maxEntries) bad(`the archive has more than ${this.limits.maxEntries} entries`);
    if (h.type !== 'file' && h.type !== 'directory') {
      bad(`entry ${shown(h.name)} is ${h.type === null ? 'of an unknown type' : (TYPE_NAMES[h.type] ?? `of type ${h.type}`)}; only regular files and directories are allowed`);
    }
    const type = h.type as 'file' | 'directory';
    const path = normaliseEntryPath(h.name, this.limits);
    if (path === '') {
      if (type === 'directory') return null;
      bad(`entry ${shown(h.name)} is a file without a name`);
    }
    const parts = path.split('/');
    const topName = parts[0] as string;
    if (type === 'file' && parts.length === 1) bad(`file ${shown(h.name)} is at the top level; the chart must be inside one directory`);
    if (this.top === null) this.top = topName;
    else if (this.top !== topName) bad(`the archive has more than one top-level directory (${shown(this.top)} and ${shown(topName)})`);
    const size = type === 'file' ? h.size : 0;
    if (type === 'file') {
      if (!Number.isSafeInteger(size) || size < 0) bad(`entry ${shown(h.name)} has an invalid size`);
      if (size > this.limits.maxFileBytes) bad(`file ${shown(h.name)} is ${size} bytes; the limit is ${this.limits.maxFileBytes} per file`);
      this.unpacked += size;
      if (this.unpacked > this.limits.maxUnpackedBytes) bad(`the archive unpacks to more than ${this.limits.maxUnpackedBytes} bytes`);
    }
    this.claim(path, type, h.name);
    if (type === 'file' && parts.length === 2 && parts[1] === CHART_YAML) this.hasChartYaml = true;
    const entry: ChartEntry = { path, type, size };
    this.entries.push(entry);
    return entry;
  }

  private claim(path: string, type: 'file' | 'directory', raw: string): void {
    const key = foldKey(path);
    const sameFile = this.files.get(key);
    if (sameFile !== undefined) bad(sameFile === path ? `entry ${shown(raw)} appears more than once` : `entries ${shown(sameFile)} and ${shown(path)} differ only by case or Unicode normalisation`);
    const sameDir = type === 'file' ? this.dirs.get(key) : undefined;
    if (sameDir !== undefined) bad(sameDir === path ? `entry ${shown(raw)} is both a file and a directory` : `entries ${shown(sameDir)} and ${shown(path)} differ only by case or Unicode normalisation`);
    const existingDir = this.dirs.get(key);
    if (type === 'directory' && existingDir !== undefined) {
      if (existingDir !== path) bad(`entries ${shown(existingDir)} and ${shown(path)} differ only by case or Unicode normalisation`);
      if (this.explicitDirs.has(key)) bad(`entry ${shown(raw)} appears more than once`);
    }
    // every ancestor is a directory: none may be a file, and their spelling must agree
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const ancestor = parts.slice(0, i).join('/');
      const akey = foldKey(ancestor);
      const file = this.files.get(akey);
      if (file !== undefined) bad(`entry ${shown(raw)} is inside ${shown(file)}, which is a file`);
      const seen = this.dirs.get(akey);
      if (seen !== undefined && seen !== ancestor) bad(`entries ${shown(seen)} and ${shown(ancestor)} differ only by case or Unicode normalisation`);
      this.dirs.set(akey, ancestor);
    }
    if (type === 'file') this.files.set(key, path);
    else {
      this.dirs.set(key, path);
      this.explicitDirs.add(key);
    }
  }

  /** After the last entry: the top-level directory and the entries, or a refusal. */
  finish(): { topDir: string; entries: ChartEntry[] } {
    if (this.top === null) return bad('the archive has no entries');
    if (!this.hasChartYaml) return bad(`the archive has no ${CHART_YAML} directly in its top-level directory ${shown(this.top)}`);
    return { topDir: this.top, entries: this.entries };
  }
}
