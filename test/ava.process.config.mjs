// Tests that start the real daemon as a process. They share port 80 and the FUSE mount point,
// so they run in a run of their own, one file and one test at a time.
export default {
  files: ['dist/test/process/**/*.test.js'],
  workerThreads: false,
  serial: true,
  concurrency: 1,
  timeout: '3m',
  nodeArguments: ['--enable-source-maps'],
  environmentVariables: { UV_THREADPOOL_SIZE: '64' },
};
