/**
 * The object store's own commands, run without the daemon: `hostd recover|restore|backup ...`
 * reach them here (runtime/cli/main.ts dispatches the top-level name to this service command). One entry per
 * command, its module loaded only when it runs (the daemon loads this file with the service).
 */
import type { ServiceCommand } from '../../runtime/service.js';

type Run = (args: string[], out: (line: string) => void) => Promise<number>;

const COMMANDS: Record<string, () => Promise<Run>> = {
  recover: async () => (await import('./recovery/cli.js')).recoverCommand,
  restore: async () => (await import('./journal/cli.js')).restoreCommand,
  backup: async () => (await import('./journal/cli.js')).backupCommand,
};

export const objstoreCommand: ServiceCommand = {
  usage: `Usage: hostd objstore <command> [options]\n\nCommands:\n${Object.keys(COMMANDS).map((c) => `  ${c}    (see hostd ${c} --help)`).join('\n')}`,
  run: async (args, out) => {
    const [name, ...rest] = args;
    const load = name === undefined ? undefined : COMMANDS[name];
    if (!load) {
      process.stderr.write(`hostd objstore: unknown command ${JSON.stringify(name)} (commands: ${Object.keys(COMMANDS).join(', ')})\n`);
      return 2;
    }
    try {
      return await (await load())(rest, out);
    } catch (err) {
      // a bad option: named, with the help of this command (not of `hostd objstore`)
      if (!(err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw err;
      process.stderr.write(`hostd: ${(err as Error).message}; see 'hostd ${name} --help'\n`);
      return 2;
    }
  },
};
