import { ResourceLimits, Worker } from 'node:worker_threads';

/**
 * Options of `runInWorkerThread(...)`.
 * @publicApi
 */
export interface WorkerThreadOptions {
  /** Aborting it terminates the thread at once (pass the handler's signal). */
  signal?: AbortSignal;
  /** Export of the module to call. @default 'default' */
  exportName?: string;
  /** V8 heap limits of the thread, so a runaway allocation kills the thread, not the worker. */
  resourceLimits?: ResourceLimits;
}

// Runs in the thread: load the module, call the export, post back the outcome.
const BOOTSTRAP = `
const { parentPort, workerData } = require('node:worker_threads');
Promise.resolve()
  .then(() => {
    const mod = require(workerData.modulePath);
    const fn = workerData.exportName === 'default' ? (mod.default ?? mod) : mod[workerData.exportName];
    if (typeof fn !== 'function') throw new TypeError(workerData.exportName + ' of ' + workerData.modulePath + ' is not a function');
    return fn(workerData.input);
  })
  .then(
    (value) => parentPort.postMessage({ ok: true, value }),
    (error) => parentPort.postMessage({ ok: false, name: error && error.name, message: String(error && error.message || error), stack: error && error.stack }),
  );
`;

/**
 * Runs a function exported by a plain JavaScript module in a worker thread and terminates the
 * thread when `signal` aborts: for work that must be killable at its deadline (a CPU loop, a
 * library that ignores signals), which no `AbortSignal` can stop in the main thread. `input` and
 * the result cross the thread boundary by structured clone; the module has no Nest container
 * and no tenant context, so pass it what it needs.
 * @publicApi
 */
export function runInWorkerThread<R = unknown>(
  modulePath: string,
  input: unknown,
  options: WorkerThreadOptions = {},
): Promise<R> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<R>((resolve, reject) => {
    const thread = new Worker(BOOTSTRAP, {
      eval: true,
      workerData: { modulePath, exportName: options.exportName ?? 'default', input },
      resourceLimits: options.resourceLimits,
      execArgv: [],
    });
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      fn();
      void thread.terminate();
    };
    const onAbort = () => settle(() => reject(signal?.reason));
    signal?.addEventListener('abort', onAbort, { once: true });
    thread.once('message', (message: any) =>
      settle(() => (message.ok ? resolve(message.value) : reject(revive(message)))),
    );
    thread.once('error', (error) => settle(() => reject(error)));
    thread.once('exit', (code) =>
      settle(() => reject(new Error(`worker thread exited with code ${code} before answering`))),
    );
  });
}

function revive(message: { name?: string; message: string; stack?: string }): Error {
  const error = new Error(message.message);
  if (message.name) error.name = message.name;
  if (message.stack) error.stack = message.stack;
  return error;
}
