/** `hostd recover --from-disks [options]`: the command line of recoverFromDisks (recover.ts). */
import { parseArgs } from 'node:util';
import { stateDirSetting } from '../../../runtime/config/daemon-settings.js';
import { resolve, ConfigError } from '../../../runtime/config/settings.js';
import { recoverFromDisks, RecoverError } from './recover.js';
import { formatReport } from './report.js';

export const RECOVER_USAGE = `Usage: hostd recover --from-disks [options]

Rebuilds the object store's record database from the slices on its disks, with the daemon
stopped: the last resort when the database is lost and no snapshot restores it ('hostd restore').
Every slice written since slice format version 3 has a record sidecar (path, MIME type, MD5,
layout); older slices cannot give those back and are reported, not recorded.

Options:
  --from-disks                required: recover from the slices on the disks
  --state-dir DIR             state directory (env HOSTD_STATE_DIR; default /var/lib/objstore)
  --dry-run                   scan and report what would be recovered; write nothing
  --force                     replace a record database that is in place (it is kept, renamed aside)
  --devices DEV[,DEV...]      look at these block devices only (default: every block device)
  --instance-id UUID          the installation id, when <state-dir>/instance-id is lost too
  --json                      print the report as one JSON document
  -h, --help                  show this help

Example:
  hostd recover --from-disks --dry-run
  hostd recover --from-disks --force --state-dir /var/lib/objstore`;

export async function recoverCommand(args: string[], out: (line: string) => void): Promise<number> {
  const err = (s: string) => process.stderr.write(`hostd recover: ${s}\n`);
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        'from-disks': { type: 'boolean' },
        'state-dir': { type: 'string' },
        'dry-run': { type: 'boolean' },
        force: { type: 'boolean' },
        devices: { type: 'string' },
        'instance-id': { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    err(`${(e as Error).message}; see 'hostd recover --help'`);
    return 2;
  }
  if (values.help) {
    out(RECOVER_USAGE);
    return 0;
  }
  if (!values['from-disks']) {
    err("say where to recover from: --from-disks (the only source this command has; 'hostd restore' restores a snapshot)");
    return 2;
  }
  let stateDir: string;
  try {
    ({ stateDir } = resolve({ stateDir: stateDirSetting }, values as Record<string, string | undefined>));
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    err(e.message);
    return 2;
  }
  const devices = typeof values.devices === 'string' ? values.devices.split(',').map((d) => d.trim()).filter(Boolean) : undefined;
  if (devices && (!devices.length || devices.some((d) => !d.startsWith('/dev/')))) {
    err(`--devices must list block devices like /dev/sdb, comma-separated; got ${JSON.stringify(values.devices)}`);
    return 2;
  }
  try {
    const report = await recoverFromDisks({
      stateDir,
      dryRun: values['dry-run'] === true,
      force: values.force === true,
      devices,
      instanceId: typeof values['instance-id'] === 'string' ? values['instance-id'] : undefined,
      progress: (line) => process.stderr.write(`${line}\n`),
    });
    out(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
    return 0;
  } catch (e) {
    if (e instanceof RecoverError) {
      err(e.message);
      return 1;
    }
    throw e;
  }
}
