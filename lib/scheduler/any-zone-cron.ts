import { ZonedCron } from './zoned-cron';

let universe: string[] | undefined;

/** Every zone a tenant may be in: the runtime's IANA zones, UTC and the Etc/GMT offsets. */
export function allTimezones(): string[] {
  if (!universe) {
    const etc: string[] = [];
    for (let hours = -14; hours <= 12; hours++) {
      if (hours !== 0) etc.push(`Etc/GMT${hours > 0 ? '+' : ''}${hours}`);
    }
    universe = [...new Set(['UTC', ...Intl.supportedValuesOf('timeZone'), ...etc])];
  }
  return universe;
}

interface ZoneState {
  cron: ZonedCron;
  /** The zone's next run, valid for queries in [from, next). */
  from: number;
  next: number | null;
}

/**
 * @internal The driver of a `timezone: 'tenant'` cron: its occurrences are the union of the
 * expression's occurrences in every zone, so one sweep of the directory runs at each instant
 * where the local time matches somewhere, and each tenant is matched in its own zone then.
 */
export class AnyZoneCron {
  private readonly zones: ZoneState[];

  constructor(cron: ZonedCron) {
    this.zones = allTimezones().map((zone) => ({ cron: cron.inZone(zone), from: 0, next: -1 }));
  }

  nextAfter(after: number): number | null {
    // Zones at the same offset share a wall clock, so the cron matcher runs once per offset.
    const walls = new Map<number, number | null>();
    let best: number | null = null;
    for (const state of this.zones) {
      if (after < state.from || state.next === -1 || (state.next !== null && after >= state.next)) {
        const wallAfter = state.cron.wallTimeOf(after);
        let wall = walls.get(wallAfter);
        if (wall === undefined) {
          wall = state.cron.nextWallAfter(wallAfter);
          walls.set(wallAfter, wall);
        }
        const instant = wall === null ? null : state.cron.resolve(wall);
        state.from = after;
        state.next = instant !== null && instant > after ? instant : state.cron.nextAfter(after);
      }
      if (state.next !== null && (best === null || state.next < best)) best = state.next;
    }
    return best;
  }
}
