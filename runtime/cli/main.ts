/**
 * The `hostd` command: `hostd daemon`, `hostd inspect`, `hostd help`. Flags are parsed
 * strictly (an unknown flag is an error); settings are validated before anything starts.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { daemonSchema, SERVICE_NAMES, stateDirSetting, type ServiceName } from '../config/daemon-settings.js';
import { ConfigError, describe, resolve, type Schema } from '../config/settings.js';
import type { ServiceDefinition } from '../service.js';
import type { ServiceCatalogue } from '../service.js';
import { chooseServices, loadDefinitions, runDaemon, type ChosenService } from './daemon.js';
import { inspect, InspectError } from './inspect.js';

const EXIT_USAGE = 2;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

const MAIN_HELP = `hostd — storage-and-voice host daemon

Usage:
  hostd daemon [options]        run the daemon (object store, media bridge, gateway, deployer)
  hostd inspect [id] [options]  list or show the actors' durable checkpoints
  hostd restore [options]       rebuild the object store's records from a snapshot + journal (daemon stopped)
  hostd backup <file>           copy the record database while the daemon serves
  hostd deployer token create   issue an admin token of the deployment service
  hostd recover --from-disks    rebuild the object store's records from its disks (daemon stopped)
  hostd help [command]          show help for a command
  hostd --version               print the version

Run 'hostd <command> --help' for the options of a command.`;

function daemonHelp(available: readonly ServiceName[], defs: readonly ServiceDefinition[]): string {
  const own = defs.filter((d) => d.settings && Object.keys(d.settings).length).map((d) => `\nOptions of the ${d.name} service:\n${describe(d.settings!)}`).join('\n');
  return `Usage: hostd daemon [options]

Runs the supervisor and the services, each as actors on worker threads. SIGTERM or SIGINT
shuts down in order (the gateway drains first); a second signal exits at once.
Every option can also be set by its environment variable; a flag wins.

Services known: ${SERVICE_NAMES.join(', ')}; built in this version: ${available.length ? available.join(', ') : 'none yet'}.

Options:
${describe(daemonSchema(available))}
  -h, --help                  show this help
${own}

Example:
  hostd daemon --services objstore,media --metrics-port 9464`;
}

const INSPECT_HELP = `Usage: hostd inspect [actor-id] [options]

Lists every actor checkpoint in the state directory (actor id, kind, updated at, age, size),
or shows one checkpoint in full. Reads the LMDB environment read-only: safe while the daemon runs.

Options:
${describe({ stateDir: stateDirSetting })}
  --json                      machine-readable output (one JSON document)
  -h, --help                  show this help

Examples:
  hostd inspect
  hostd inspect hostd.heartbeat
  hostd inspect --json --state-dir /var/lib/objstore`;

/** The services' own commands, for messages: ", deployer". */
function commandNames(defs: readonly ServiceDefinition[]): string {
  return defs.filter((d) => d.command).map((d) => `, ${d.name}`).join('');
}

/**
 * The command-line options of every schema (the daemon's and each service's), by flag. Schemas
 * are separate namespaces (the daemon and a service may both have a `heartbeatMs`): what must be
 * unique is the flag, and a flag two schemas both declare is a programming error.
 */
function flagOptions(schemas: ReadonlyArray<Record<string, { flag: string; boolean?: boolean }>>) {
  const o: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const schema of schemas) {
    for (const s of Object.values(schema)) {
      if (Object.hasOwn(o, s.flag)) throw new Error(`the flag --${s.flag} is declared twice`);
      o[s.flag] = { type: s.boolean ? 'boolean' : 'string' };
    }
  }
  return o;
}

export async function main(argv: string[], catalogue: ServiceCatalogue): Promise<number> {
  const available = SERVICE_NAMES.filter((n) => catalogue[n]);
  const [command, ...rest] = argv;
  const out = (s: string) => process.stdout.write(s + '\n');
  const fail = (msg: string, code = EXIT_USAGE) => {
    process.stderr.write(`hostd: ${msg}\n`);
    return code;
  };
  try {
    switch (command) {
      case undefined:
      case '-h':
      case '--help':
        out(MAIN_HELP);
        return command === undefined ? EXIT_USAGE : 0;
      case '--version':
      case '-v':
        out(version());
        return 0;
      case 'help': {
        const topic = rest[0];
        if (topic === 'daemon') out(daemonHelp(available, await loadDefinitions(catalogue)));
        else if (topic === 'inspect') out(INSPECT_HELP);
        else if (topic === undefined) out(MAIN_HELP);
        else if (topic === 'recover' || topic === 'restore' || topic === 'backup') return await main([topic, '--help'], catalogue);
        else return fail(`no help for unknown command '${topic}' (commands: daemon, inspect, recover, restore, backup)`);
        return 0;
      }
      case 'daemon': {
        const schema = daemonSchema(available);
        const defs = await loadDefinitions(catalogue);
        const options = flagOptions([schema, ...defs.map((d) => d.settings ?? {})]);
        const { values, positionals } = parseArgs({ args: rest, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
        if (values.help) {
          out(daemonHelp(available, defs));
          return 0;
        }
        if (positionals.length) return fail(`daemon takes no arguments (got '${positionals.join(' ')}'); see 'hostd daemon --help'`);
        const flags = values as Record<string, string | boolean | undefined>;
        const problems: string[] = [];
        const attempt = <T>(fn: () => T): T | undefined => {
          try {
            return fn();
          } catch (err) {
            if (!(err instanceof ConfigError)) throw err;
            problems.push(...err.problems);
            return undefined;
          }
        };
        const settings = attempt(() => resolve(schema, flags));
        const chosen = settings ? attempt(() => chooseServices(settings.services, defs)) : undefined;
        const resolved: ChosenService[] = (chosen ?? []).map((def) => ({ def, values: attempt(() => resolve(def.settings ?? {}, flags)) ?? {} }));
        if (problems.length || !settings) throw new ConfigError(problems);
        return await runDaemon(settings, resolved);
      }
      case 'inspect': {
        const { values, positionals } = parseArgs({
          args: rest,
          options: { 'state-dir': { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
          allowPositionals: true,
          strict: true,
        });
        if (values.help) {
          out(INSPECT_HELP);
          return 0;
        }
        if (positionals.length > 1) return fail(`inspect takes at most one actor id (got ${positionals.length}); see 'hostd inspect --help'`);
        const { stateDir } = resolve({ stateDir: stateDirSetting }, values as Record<string, string | undefined>);
        await inspect({ stateDir, id: positionals[0], json: values.json ?? false }, out);
        return 0;
      }
      case 'recover': // hostd recover … = hostd objstore recover … (actors/objstore/commands.ts)
      case 'restore': // hostd restore … = hostd objstore restore …
      case 'backup': // hostd backup … = hostd objstore backup …
        return await main(['objstore', command, ...rest], catalogue);
      default: {
        // a service's own command: hostd <service> …
        const def = (SERVICE_NAMES as readonly string[]).includes(command) ? (await loadDefinitions(catalogue)).find((d) => d.name === command) : undefined;
        if (def?.command) {
          if (rest.length === 0 || rest[0] === '--help' || rest[0] === '-h') {
            out(def.command.usage);
            return rest.length === 0 ? EXIT_USAGE : 0;
          }
          return await def.command.run(rest, out);
        }
        return fail(`unknown command '${command}' (commands: daemon, inspect, help${commandNames(await loadDefinitions(catalogue))}); see 'hostd --help'`);
      }
    }
  } catch (err) {
    if (err instanceof ConfigError) return fail(err.message);
    if (err instanceof InspectError) return fail(err.message, 1);
    if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) return fail(`${(err as Error).message}; see 'hostd ${command} --help'`);
    return fail(`${(err as Error).stack ?? String(err)}`, 1);
  }
}
