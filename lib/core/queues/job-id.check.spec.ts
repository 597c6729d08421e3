import { InvalidJobIdError } from '../errors';
import {
  BULLMQ_KEY_SUFFIXES,
  assertCallerJobId,
  isModuleJobId,
  moduleJobOptions,
  tenantDeduplicationId,
} from './job-id.check';

describe('job id checks', () => {
  it("refuses BullMQ's key names and the module's namespace; marked module options pass", () => {
    for (const id of BULLMQ_KEY_SUFFIXES) {
      expect(() => assertCallerJobId('q', 'x', {}, id)).toThrow(InvalidJobIdError);
    }
    for (const id of ['a~b', 'sched~acme~k~20260101T000000Z', 'x.r1', 'x.r12']) {
      expect(isModuleJobId(id)).toBe(true);
      expect(() => assertCallerJobId('q', 'x', { jobId: id }, id)).toThrow(InvalidJobIdError);
      expect(() => assertCallerJobId('q', 'x', moduleJobOptions({ jobId: id }), id)).not.toThrow();
    }
    for (const id of ['order-1', 'Wait', 'x.r', 'x.r1a', 'a-c0', 'waiting']) {
      expect(isModuleJobId(id)).toBe(false);
      expect(() => assertCallerJobId('q', 'x', {}, id)).not.toThrow();
    }
  });

  it('deduplication ids of two tenants (or none) never meet, whatever the ids hold', () => {
    const pairs: [string | undefined, string][] = [
      ['a', 'b:c'],
      ['a:b', 'c'],
      ['a%3Ab', 'c'],
      [undefined, 'x'],
      ['s', 'x'],
      ['', 'x'],
    ];
    const ids = pairs.map(([tenant, id]) => tenantDeduplicationId(tenant, id));
    expect(new Set(ids).size).toBe(ids.length);
  });
});
