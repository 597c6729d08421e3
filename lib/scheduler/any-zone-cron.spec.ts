import { AnyZoneCron, allTimezones } from './any-zone-cron';
import { ZonedCron } from './zoned-cron';

const HOUR = 3_600_000;

describe('AnyZoneCron (the driver of a timezone: "tenant" cron)', () => {
  const cron = ZonedCron.parse('0 9 * * *', 'UTC');
  const driver = new AnyZoneCron(cron);

  it('knows every IANA zone of the runtime, UTC and the Etc/GMT offsets', () => {
    const zones = allTimezones();
    expect(zones).toEqual(
      expect.arrayContaining(['UTC', 'America/New_York', 'Etc/GMT+12', 'Etc/GMT-14']),
    );
    expect(zones.length).toBeGreaterThan(400);
  });

  it("fires at every instant where some tenant's zone (aliases included) reaches 09:00", () => {
    const from = Date.parse('2026-03-27T00:00:00Z');
    const to = from + 72 * HOUR; // across the EU spring-forward
    const instants = new Set<number>();
    for (let t = driver.nextAfter(from); t !== null && t <= to; t = driver.nextAfter(t)) {
      instants.add(t);
    }
    // Europe/Kyiv is not in Node 20's list (it lists Europe/Kiev), yet its 09:00 is covered.
    const tenantZones = [
      'Europe/Kyiv',
      'Europe/Kiev',
      'US/Eastern',
      'Asia/Kathmandu',
      'Australia/Lord_Howe',
    ];
    for (const zone of tenantZones) {
      const local = cron.inZone(zone);
      for (let t = local.nextAfter(from); t !== null && t <= to; t = local.nextAfter(t)) {
        expect(instants.has(t)).toBe(true);
      }
    }
    // About one instant per distinct UTC offset a day, never one per zone.
    expect(instants.size).toBeGreaterThan(60);
    expect(instants.size).toBeLessThan(200);
  });

  it('is the earliest of the per-zone next runs, for queries in any order', () => {
    for (const at of ['2026-11-01T05:59:00Z', '2026-06-01T00:00:00Z', '2026-01-01T12:34:00Z']) {
      const after = Date.parse(at);
      const expected = Math.min(
        ...allTimezones().map((zone) => cron.inZone(zone).nextAfter(after) ?? Infinity),
      );
      expect(driver.nextAfter(after)).toBe(expected);
    }
  });
});
