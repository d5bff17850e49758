/**
 * `hostd deployer token create [--scopes admin|read|iac:<id>,…] [--label text] [--state-dir dir]`:
 * issues an admin token of the deployment service straight into its store (LMDB is shared between
 * processes, so a running daemon accepts the token at once), prints it once, keeps only its hash.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { stateDirSetting } from '../../runtime/config/daemon-settings.js';
import { resolve } from '../../runtime/config/settings.js';
import { openEnvironment } from '../../runtime/checkpoint/store.js';
import type { ServiceCommand } from '../../runtime/service.js';
import { adminToken, adminTokenHash, scopeList } from '../../protocols/deploy/admin-scopes.js';
import { attempt } from '../../protocols/deploy/errors.js';
import { NAME_RULE } from '../../protocols/deploy/api.js';
import { textValue } from '../../protocols/deploy/fields.js';
import { DeployerStore } from './store.js';

export const USAGE = `Usage: hostd deployer token create [options]

Issues an admin token of the deployment service and prints it (once: only its SHA-256 is kept).
A running daemon accepts it at once.

Options:
  --scopes <list>       comma-separated: admin, read, iac:<iacRepoId> (default admin)
  --label <text>        what the token is for (shown by GET /api/session/me)
  --state-dir <dir>     the daemon's state directory (env HOSTD_STATE_DIR; default /var/lib/objstore)
  -h, --help            show this help`;

export const deployerCommand: ServiceCommand = {
  usage: USAGE,
  async run(args, out) {
    if (args[0] !== 'token' || args[1] !== 'create') {
      process.stderr.write(`hostd deployer: unknown command '${args.join(' ')}'\n${USAGE}\n`);
      return 2;
    }
    const { values } = parseArgs({ args: args.slice(2), options: { scopes: { type: 'string' }, label: { type: 'string' }, 'state-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true });
    if (values.help) {
      out(USAGE);
      return 0;
    }
    const checked = attempt(() => ({ scopes: scopeList((values.scopes ?? 'admin').split(','), '--scopes'), label: values.label === undefined ? '' : textValue(values.label, '--label', NAME_RULE) }));
    if (!checked.ok) {
      process.stderr.write(`hostd deployer: ${checked.error.message}\n`);
      return 2;
    }
    const { stateDir } = resolve({ stateDir: stateDirSetting }, { 'state-dir': values['state-dir'] });
    const root = openEnvironment(stateDir);
    try {
      const token = adminToken(randomBytes(32));
      await new DeployerStore(root).addToken({ id: randomUUID(), hash: adminTokenHash(token), scopes: checked.value.scopes, label: checked.value.label, createdAt: Date.now() });
      out(token);
      return 0;
    } finally {
      await root.close();
    }
  },
};
