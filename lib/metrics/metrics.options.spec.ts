import { InvalidTenantQueueOptionsError } from '../core/errors';
import { TRACEPARENT } from '../core/envelope/tenant-envelope.dto';
import { TenantLabeler, resolveMetricsOptions } from './metrics.options';

const resolve = (metrics: unknown) => resolveMetricsOptions({ connection: {}, metrics } as never);

describe('metrics options', () => {
  it('fills documented defaults', () => {
    expect(resolve(undefined)).toMatchObject({
      sink: undefined,
      maxTenantLabels: 100,
      flushIntervalMs: 1000,
      windowMinutes: 5,
      gaugeIntervalMs: 15000,
    });
  });

  it.each([
    [{ maxTenantLabels: -1 }, 'metrics.maxTenantLabels'],
    [{ maxTenantLabels: 1.5 }, 'metrics.maxTenantLabels'],
    [{ sink: 'statsd' }, 'metrics.sink'],
    [{ sink: { observeLag() {} } }, 'metrics.sink'],
    [{ labelFor: 'tier' }, 'metrics.labelFor'],
    [{ flushIntervalMs: 1 }, 'metrics.flushIntervalMs'],
    [{ windowMinutes: 0 }, 'metrics.windowMinutes'],
    [{ cardinality: 5 }, 'metrics.cardinality'],
  ])('rejects %j naming %s', (metrics, field) => {
    expect(() => resolve(metrics)).toThrow(InvalidTenantQueueOptionsError);
    expect(() => resolve(metrics)).toThrow(field);
  });

  it('gives the first N tenants their own label and folds the rest into "other"', () => {
    const labeler = new TenantLabeler(resolve({ maxTenantLabels: 2 }));
    expect(['a', 'b', 'c', 'a', 'd', 'b'].map((t) => labeler.label(t))).toEqual([
      'a',
      'b',
      'other',
      'a',
      'other',
      'b',
    ]);
    expect(labeler.label(undefined)).toBe('none');
  });

  it('uses labelFor (e.g. a tier) when given', () => {
    const labeler = new TenantLabeler(
      resolve({ labelFor: (id: string) => (id.startsWith('ent-') ? 'enterprise' : 'standard') }),
    );
    expect(labeler.label('ent-acme')).toBe('enterprise');
    expect(labeler.label('globex')).toBe('standard');
  });
});

describe('traceparent pattern', () => {
  it('accepts W3C version 00 and refuses malformed or all-zero ids', () => {
    expect(TRACEPARENT.test('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toBe(true);
    for (const bad of [
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
    ]) {
      expect(TRACEPARENT.test(bad)).toBe(false);
    }
  });
});
