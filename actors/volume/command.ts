/** Running the system's disk tools (lsblk, blkid, wipefs, mkfs.xfs, mount, smartctl). */
import { execFile } from 'node:child_process';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export class CommandError extends Error {
  readonly result: CommandResult;
  constructor(cmd: string, args: readonly string[], result: CommandResult) {
    // The whole message (the reason is often the first line, a usage text follows), bounded.
    const lines = (result.stderr.trim() || result.stdout.trim()).split('\n').map((l) => l.trim()).filter(Boolean);
    const text = lines.join('; ');
    const detail = text.length > 600 ? `${text.slice(0, 400)} … ${text.slice(-150)}` : text;
    super(`${cmd} ${args.join(' ')} failed (exit ${result.code})${detail ? `: ${detail}` : ''}`);
    this.name = 'CommandError';
    this.result = result;
  }
}

/**
 * Run `cmd` without a shell; resolves with its output whatever its exit code when `okCodes` is
 * 'any', else rejects with CommandError unless it exits with one of `okCodes` (default [0]).
 */
export function command(cmd: string, args: readonly string[], opts: { timeoutMs?: number; okCodes?: number[] | 'any' } = {}): Promise<CommandResult> {
  const { timeoutMs = 120_000, okCodes = [0] } = opts;
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs, maxBuffer: 64 << 20, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: number | string; killed?: boolean }) | null;
      if (e && typeof e.code === 'string') return reject(new Error(`${cmd}: ${e.code === 'ENOENT' ? 'not installed' : e.message}`));
      const code = e ? (typeof e.code === 'number' ? e.code : e.killed ? -1 : 1) : 0;
      const result = { code, stdout, stderr };
      if (okCodes === 'any' || okCodes.includes(code)) resolve(result);
      else reject(new CommandError(cmd, args, result));
    });
  });
}
