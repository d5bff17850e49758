/**
 * The object store's own commands, run without the daemon: `hostd recover ...` reaches `recover`
 * here (runtime/cli/main.ts dispatches the top-level name to this service command). One entry per
 * command, its module loaded only when it runs (the daemon loads this file with the service).
 */
import type { ServiceCommand } from '../../runtime/service.js';

type Run = (args: string[], out: (line: string) => void) => Promise<number>;

const COMMANDS: Record<string, () => Promise<Run>> = {
  recover: async () => (await import('./recovery/cli.js')).recoverCommand,
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
    return (await load())(rest, out);
  },
};
