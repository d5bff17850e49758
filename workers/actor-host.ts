/** Entry point of a worker thread that hosts actors. */
import { workerData } from 'node:worker_threads';
import { Host } from '../runtime/host/host.js';
import type { HostBoot } from '../runtime/wire.js';

new Host(workerData as HostBoot);
