import { InvalidJobIdError } from '../errors';
import {
  BULLMQ_KEY_SUFFIXES,
  MAX_JOB_ID_LENGTH,
  assertCallerJobId,
  isJobIdLookup,
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

  it('a caller id is at most 1000 characters; a lookup takes any id the module admits', () => {
    const longest = 'x'.repeat(MAX_JOB_ID_LENGTH);
    expect(() => assertCallerJobId('q', 'x', {}, longest)).not.toThrow();
    expect(() => assertCallerJobId('q', 'x', {}, `${longest}y`)).toThrow(
      /1001 characters long, above the limit of 1000; nothing was enqueued/,
    );
    const replay = `${longest}.r123456789`;
    expect(() => assertCallerJobId('q', 'x', moduleJobOptions({}), replay)).not.toThrow();
    expect(isJobIdLookup(replay)).toBe(true);
    for (const id of ['', 'x'.repeat(MAX_JOB_ID_LENGTH + 25), null, 7, {}, ['1']]) {
      expect(isJobIdLookup(id)).toBe(false);
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
