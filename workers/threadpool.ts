/**
 * Size libuv's thread pool before anything uses it. Every file operation of every volume runs
 * on it, and a disk that stops answering holds one of its threads per stuck call: with the
 * default of 4, one bad disk could stall all the others. Imported first by the main entry, so
 * it runs before any module does I/O. An explicit UV_THREADPOOL_SIZE is kept.
 */
process.env.UV_THREADPOOL_SIZE ??= '64';
export {};
