import { Logger } from '@nestjs/common';
import { ClsServiceManager } from 'nestjs-cls';
import { JobScopeUnavailableError } from '../errors';
import { JobTenantState, TENANT_STATE } from '../context/tenant-state';
import { JobRunContext } from '../processor/tenant-job-pipeline';
import { JobScope, endJobScope, runDisposers } from './job-scope';

const cls = ClsServiceManager.getClsService();
const scope = new JobScope(cls);
const context = () =>
  ({ job: { id: 'j1', queueName: 'q', name: 'n', data: {} } }) as unknown as JobRunContext;
const logger = { error: jest.fn() } as unknown as Logger & { error: jest.Mock };

/** Runs `fn` as the body of a job attempt, then ends the scope the way the runner does. */
async function attempt(run: JobRunContext, fn: () => unknown) {
  await cls.run(async () => {
    cls.set(TENANT_STATE, new JobTenantState(run));
    await fn();
  });
  const disposers = endJobScope(run);
  if (disposers) await runDisposers(disposers, run, logger);
}

describe('JobScope', () => {
  beforeEach(() => logger.error.mockClear());

  it('releases last-first, logs a failing disposer and still runs the others', async () => {
    const order: string[] = [];
    await attempt(context(), () => {
      scope.defer(() => order.push('first'));
      scope.use({ [Symbol.dispose]: () => order.push('sync') });
      scope.defer(() => {
        throw new Error('boom');
      });
      scope.use({ [Symbol.asyncDispose]: async () => void order.push('async') });
      scope.use({ handle: 1 }, (resource) => order.push(`custom:${resource.handle}`));
    });
    expect(order).toEqual(['custom:1', 'async', 'sync', 'first']);
    expect(logger.error).toHaveBeenCalledTimes(1);
    expect(logger.error.mock.calls[0][0]).toMatch(/job=j1 .*threw: boom/);
  });

  it('releases at once what is registered after the attempt ended', async () => {
    const run = context();
    const order: string[] = [];
    await attempt(run, () => undefined);
    await cls.run(async () => {
      cls.set(TENANT_STATE, new JobTenantState(run));
      scope.defer(() => order.push('late'));
    });
    expect(order).toEqual(['late']);
  });

  it('passes null through and refuses what it cannot release', async () => {
    await attempt(context(), () => {
      expect(scope.use(null)).toBeNull();
      expect(() => scope.use({ close() {} } as never)).toThrow(/Pass a disposer/);
    });
  });

  it('throws a typed error outside a job', () => {
    expect(scope.active).toBe(false);
    expect(() => scope.defer(() => undefined)).toThrow(JobScopeUnavailableError);
    cls.run(() => expect(() => scope.use(null)).toThrow(/outside a job/));
  });
});
