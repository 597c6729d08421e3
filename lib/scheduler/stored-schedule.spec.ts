import { parseStoredSchedule } from './stored-schedule.dto';
import {
  StoredCronSchedule,
  StoredSchedule,
  cronScheduleId,
  scheduleIdOf,
  tenantScheduleId,
  unknownKind,
} from './stored-schedule';

// Records exactly as the code before the union wrote them (JSON.stringify of its object literals).
const TENANT_ID = tenantScheduleId('acme', 'nightly');
const tenantRecord =
  '{"kind":"tenant","tenantId":"acme","key":"nightly","cron":"30 2 * * *","timezone":"Europe/Kyiv",' +
  '"enabled":true,"missed":"all","maxCatchUp":3,"job":{"queue":"reports","name":"report",' +
  '"data":{"kind":"daily"},"opts":{"attempts":2}}}';
const CRON_ID = cronScheduleId('digest');
const cronRecord =
  '{"kind":"cron","name":"digest","cron":"0 9 * * 1-5","timezone":"tenant","enabled":true,' +
  '"missed":"skip","maxCatchUp":10}';

const reasonOf = (id: string, raw: string) => {
  const parsed = parseStoredSchedule(id, raw);
  return parsed.kind === 'unreadable' ? parsed.reason : `parsed as ${parsed.kind}`;
};
const edit = (raw: string, change: (value: Record<string, unknown>) => void) => {
  const value = JSON.parse(raw) as Record<string, unknown>;
  change(value);
  return JSON.stringify(value);
};

describe('parseStoredSchedule: the defs records as a discriminated union', () => {
  it('reads a tenant schedule written before the union into the tenant variant', () => {
    const parsed = parseStoredSchedule(TENANT_ID, tenantRecord);
    expect(parsed).toEqual({
      kind: 'tenant',
      tenantId: 'acme',
      key: 'nightly',
      cron: '30 2 * * *',
      timezone: 'Europe/Kyiv',
      enabled: true,
      missed: 'all',
      maxCatchUp: 3,
      job: { queue: 'reports', name: 'report', data: { kind: 'daily' }, opts: { attempts: 2 } },
    });
    // Written back, it is the same record (the field order too).
    expect(JSON.stringify(parsed)).toBe(tenantRecord);
  });

  it('reads a @TenantCron driver written before the union into the cron variant', () => {
    const parsed = parseStoredSchedule(CRON_ID, cronRecord);
    expect(parsed).toEqual<StoredCronSchedule>({
      kind: 'cron',
      name: 'digest',
      cron: '0 9 * * 1-5',
      timezone: 'tenant',
      enabled: true,
      missed: 'skip',
      maxCatchUp: 10,
    });
    expect(JSON.stringify(parsed)).toBe(cronRecord);
  });

  it('fills a missing job.data with {} and leaves unknown fields out', () => {
    const raw = edit(tenantRecord, (value) => {
      const job = value.job as Record<string, unknown>;
      delete job.data;
      delete job.opts;
      value.extra = 'x';
    });
    const parsed = parseStoredSchedule(TENANT_ID, raw);
    expect(parsed).toMatchObject({ kind: 'tenant', job: { queue: 'reports', data: {} } });
    expect(parsed).not.toHaveProperty('extra');
    expect((parsed as { job: object }).job).not.toHaveProperty('opts');
  });

  it('refuses text that is not a JSON object, saying so', () => {
    expect(reasonOf(TENANT_ID, '{"kind":"tenant"')).toMatch(/^is not JSON \(/);
    expect(reasonOf(TENANT_ID, '')).toMatch(/^is not JSON \(/);
    for (const raw of ['null', '42', '"tenant"', '[]', 'true']) {
      expect(reasonOf(TENANT_ID, raw)).toBe('is not a JSON object');
    }
  });

  it('refuses an unknown or missing kind, naming it', () => {
    const every = edit(tenantRecord, (value) => (value.kind = 'every'));
    expect(reasonOf(TENANT_ID, every)).toBe(
      'has an unknown kind "every" (known: "tenant", "cron"; written by a newer version?)',
    );
    const none = edit(tenantRecord, (value) => delete value.kind);
    expect(reasonOf(TENANT_ID, none)).toMatch(/^has an unknown kind undefined/);
    const unreadable = edit(tenantRecord, (value) => (value.kind = 'unreadable'));
    expect(reasonOf(TENANT_ID, unreadable)).toMatch(/^has an unknown kind "unreadable"/);
  });

  it('refuses a variant without one of its fields, naming the field', () => {
    const cases: [string, string, (value: Record<string, unknown>) => void, RegExp][] = [
      [TENANT_ID, tenantRecord, (v) => delete v.tenantId, /^has a bad "tenantId"/],
      [TENANT_ID, tenantRecord, (v) => delete v.key, /^has a bad "key"/],
      [TENANT_ID, tenantRecord, (v) => delete v.job, /^has a bad "job"/],
      [TENANT_ID, tenantRecord, (v) => (v.job = 'report'), /^has a bad "job"/],
      [TENANT_ID, tenantRecord, (v) => delete (v.job as { queue?: string }).queue, /"job\.queue"/],
      [TENANT_ID, tenantRecord, (v) => delete v.cron, /^has a bad "cron"/],
      [TENANT_ID, tenantRecord, (v) => (v.enabled = 'yes'), /^has a bad "enabled"/],
      [TENANT_ID, tenantRecord, (v) => (v.missed = 'sometimes'), /^has a bad "missed"/],
      [TENANT_ID, tenantRecord, (v) => (v.maxCatchUp = 0), /^has a bad "maxCatchUp"/],
      [CRON_ID, cronRecord, (v) => delete v.name, /^has a bad "name"/],
      [CRON_ID, cronRecord, (v) => delete v.timezone, /^has a bad "timezone"/],
      [CRON_ID, cronRecord, (v) => (v.maxCatchUp = 1.5), /^has a bad "maxCatchUp"/],
    ];
    for (const [id, raw, change, reason] of cases) {
      expect(reasonOf(id, edit(raw, change))).toMatch(reason);
    }
  });

  it('refuses a record whose fields name another schedule than its id', () => {
    expect(reasonOf(tenantScheduleId('globex', 'nightly'), tenantRecord)).toBe(
      `describes schedule ${JSON.stringify(TENANT_ID)}, not the id it is stored under`,
    );
    // A cron driver under a tenant schedule's id, and the reverse.
    expect(reasonOf(TENANT_ID, cronRecord)).toMatch(/^describes schedule "c~digest"/);
    expect(reasonOf(CRON_ID, tenantRecord)).toMatch(/^describes schedule "t~/);
  });

  it('names the id of each variant, and narrows on kind', () => {
    const parsed = [
      parseStoredSchedule(TENANT_ID, tenantRecord),
      parseStoredSchedule(CRON_ID, cronRecord),
    ];
    const ids = parsed.map((schedule) => {
      if (schedule.kind === 'unreadable') throw new Error(schedule.reason);
      return scheduleIdOf(schedule);
    });
    expect(ids).toEqual([TENANT_ID, CRON_ID]);
    const owners = parsed.map((schedule) => {
      switch (schedule.kind) {
        case 'tenant':
          return `${schedule.tenantId}/${schedule.key} -> ${schedule.job.queue}`;
        case 'cron':
          // @ts-expect-error a @TenantCron driver has no job: the union says so
          return `${schedule.name} ${String(schedule.job)}`;
        default:
          return schedule.reason;
      }
    });
    expect(owners).toEqual(['acme/nightly -> reports', 'digest undefined']);
  });

  it('throws on a kind no switch handles (a value the types rule out)', () => {
    const bogus = { kind: 'every' } as unknown as StoredSchedule;
    expect(() => scheduleIdOf(bogus)).toThrow('Unknown stored schedule kind: {"kind":"every"}');
    expect(() => unknownKind(bogus as never)).toThrow(/Unknown stored schedule kind/);
  });
});
