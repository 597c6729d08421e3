import { InvalidTenantQueueOptionsError } from '../../../core/errors';
import { CoreQueueOptions } from '../../../core/types/queue-definition.interface';
import { bullPrefixFor } from '../../../tenant-queue.constants';
import { fairQueueOptions } from '../../fair-queue.feature';
import { budgetBaseOf } from './budget';

/** Checks queues in turn, each against those registered before it, as the registry does. */
function feature() {
  const registered: CoreQueueOptions[] = [];
  return {
    checkQueue(options: CoreQueueOptions): void {
      fairQueueOptions.checkQueue!(options, registered);
      registered.push(options);
    },
  };
}

describe('budget (registerQueue({ budget }))', () => {
  it('puts a budget queue under the budget hash tag, a queue without one under its own', () => {
    const plugins = fairQueueOptions;
    const group = plugins.keyGroupOf!({
      name: 'api-a',
      budget: 'tenant-api',
      fairness: true,
    } as never);
    expect(bullPrefixFor('tq', 'api-a', group)).toBe('{tq:~budget:tenant-api}:api-a');
    expect(plugins.keyGroupOf!({ name: 'solo', fairness: true } as never)).toBeUndefined();
    expect(bullPrefixFor('tq', 'solo', undefined)).toBe('{tq:solo}');
  });

  it("gives a budget queue's gate (and its pools') the budget's shared keys, in the same slot", () => {
    const registered = { name: 'api-a', budget: 'tenant-api', fairness: true };
    const group = fairQueueOptions.keyGroupOf!(registered as never);
    for (const name of ['api-a', 'api-a-bulk']) {
      const definition = { name, bullPrefix: bullPrefixFor('tq', name, group), registered };
      expect(budgetBaseOf(definition as never)).toBe('{tq:~budget:tenant-api}:~budget');
    }
    const solo = { name: 'solo', bullPrefix: '{tq:solo}', registered: { name: 'solo' } };
    expect(budgetBaseOf(solo as never)).toBeUndefined();
  });

  it('refuses a budget without fairness, or with a name that is not a queue name', () => {
    expect(() => feature().checkQueue({ name: 'q', budget: 'b' } as never)).toThrow(
      /"registerQueue\(q\)\.budget": budget "b" shares .* needs fairness/,
    );
    for (const budget of ['a:b', '', '~x', 3]) {
      expect(() => feature().checkQueue({ name: 'q', budget, fairness: true } as never)).toThrow(
        InvalidTenantQueueOptionsError,
      );
    }
  });

  it('refuses queues of one budget with different default caps or rate limits', () => {
    const one = feature();
    one.checkQueue({ name: 'q1', budget: 'b', fairness: { defaultConcurrency: 2 } } as never);
    one.checkQueue({ name: 'q1', budget: 'b', fairness: { defaultConcurrency: 2 } } as never);
    expect(() =>
      one.checkQueue({ name: 'q2', budget: 'b', fairness: { defaultConcurrency: 3 } } as never),
    ).toThrow(/"registerQueue\(q2\)\.fairness\.defaultConcurrency": queues "q1" and "q2" share/);
    expect(() =>
      one.checkQueue({
        name: 'q3',
        budget: 'b',
        fairness: { defaultConcurrency: 2, rateLimit: { max: 5, per: 1000 } },
      } as never),
    ).toThrow(/fairness\.rateLimit/);
    // Another budget, or no budget, is not compared.
    one.checkQueue({ name: 'q4', budget: 'c', fairness: { defaultConcurrency: 3 } } as never);
    one.checkQueue({ name: 'q5', fairness: { defaultConcurrency: 3 } } as never);
  });
});
