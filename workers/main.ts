#!/usr/bin/env node
/**
 * Entry point of the main thread: the `hostd` command. It finds which services this build has
 * (actors/<name>/service.js) and hands them to the runtime's CLI.
 */
import './threadpool.js';
import './heap.js';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { main } from '../runtime/cli/main.js';
import { SERVICE_NAMES } from '../runtime/config/daemon-settings.js';
import type { ServiceCatalogue } from '../runtime/service.js';

const catalogue = Object.fromEntries(
  SERVICE_NAMES.map((name) => {
    const url = new URL(`../actors/${name}/service.js`, import.meta.url);
    return [name, existsSync(fileURLToPath(url)) ? url.href : null];
  }),
) as ServiceCatalogue;

const code = await main(process.argv.slice(2), catalogue);
process.exitCode = code;
