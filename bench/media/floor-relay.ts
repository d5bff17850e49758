/**
 * The floor of a relay written on Node's dgram: the least a Node process can do per packet.
 * Commands come as lines on stdin, answers go to stdout:
 *   `open <portA> <portB>` → `ok <toA> <toB>`: two sockets on 127.0.0.1, each connected to
 *   its leg; what arrives on one is sent unchanged on the other (no parsing, no rewrite, no
 *   callback). `close` closes every pair. Prints `READY <pid>` when it starts.
 * With `--worker` the sockets live on one worker thread (as the bridge's do) and the main
 * thread only passes the commands on: the same work, to see what a worker thread costs.
 * With `--unconnected` the sockets are used as the bridge's sockets.ts uses them: bound to
 * 0.0.0.0, not connected, each send naming the address and port and passing a callback.
 * Run by bench/media/floor.ts; plain RTP only.
 */
import dgram from 'node:dgram';
import { createInterface } from 'node:readline';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';

const open: dgram.Socket[] = [];
const unconnected = process.argv.includes('--unconnected');
const bind = (s: dgram.Socket) => new Promise<void>((r) => s.bind(0, unconnected ? '0.0.0.0' : '127.0.0.1', () => r()));
const connect = (s: dgram.Socket, port: number) => new Promise<void>((r) => s.connect(port, '127.0.0.1', () => r()));

async function pair(portA: number, portB: number): Promise<[number, number]> {
  const x = dgram.createSocket({ type: 'udp4', recvBufferSize: 1 << 20, sendBufferSize: 1 << 20 }); // faces leg A
  const y = dgram.createSocket({ type: 'udp4', recvBufferSize: 1 << 20, sendBufferSize: 1 << 20 }); // faces leg B
  await Promise.all([bind(x), bind(y)]);
  if (unconnected) {
    let errors = 0;
    const afterSend = (err: Error | null) => void (err && errors++);
    x.on('message', (m) => y.send(m, portB, '127.0.0.1', afterSend));
    y.on('message', (m) => x.send(m, portA, '127.0.0.1', afterSend));
  } else {
    await Promise.all([connect(x, portA), connect(y, portB)]);
    x.on('message', (m) => y.send(m));
    y.on('message', (m) => x.send(m));
  }
  x.on('error', () => undefined);
  y.on('error', () => undefined);
  open.push(x, y);
  return [x.address().port, y.address().port];
}

/** One command line → its answer line. */
async function handle(line: string): Promise<string> {
  const [cmd, a, b] = line.trim().split(' ');
  if (cmd === 'open') {
    try {
      const [toA, toB] = await pair(Number(a), Number(b));
      return `ok ${toA} ${toB}`;
    } catch (e) {
      return `error ${(e as Error).message}`;
    }
  }
  if (cmd === 'close') {
    for (const s of open.splice(0)) s.close();
    return 'closed';
  }
  return `error unknown command ${cmd}`;
}

if (!isMainThread) {
  parentPort!.on('message', (line: string) => void handle(line).then((answer) => parentPort!.postMessage(answer)));
} else {
  const worker = process.argv.includes('--worker') ? new Worker(new URL(import.meta.url), { argv: process.argv.slice(2) }) : null;
  const answers: Array<(s: string) => void> = [];
  worker?.on('message', (s: string) => answers.shift()?.(s));
  const ask = (line: string): Promise<string> =>
    worker ? new Promise((resolve) => (answers.push(resolve), worker.postMessage(line))) : handle(line);
  const rl = createInterface({ input: process.stdin });
  let chain = Promise.resolve();
  rl.on('line', (line) => {
    chain = chain.then(() => ask(line).then((answer) => void process.stdout.write(answer + '\n')));
  });
  rl.on('close', () => process.exit(0));
  process.stdout.write(`READY ${process.pid}\n`);
}
