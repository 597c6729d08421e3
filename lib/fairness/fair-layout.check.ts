import type { RedisClient } from '../core/redis/tenant-queue.redis';
import { LuaScriptSpec, LuaScripts } from '../core/redis/lua-scripts';
import { Messages } from '../tenant-queue.messages';
import { FAIR_LUA_DIR } from './fair-gate.script';
import type { FairQueueConfig } from './fair-queue-config';

/** How often each process takes a backlog queued under other lanes or fair keys into its own. */
export const LAYOUT_CHECK_MS = 30_000;
/**
 * About how many held ids one script call moves (a tenant's move whole): Redis runs nothing else
 * during a call, and a backlog of a million ids in one would pass its 5 s script limit.
 */
export const LAYOUT_BATCH = 5_000;

interface FairLayoutCommands {
  tqFairLayout(
    base: string,
    delayed: string,
    config: string,
    layout: string,
    lane: string,
    batch: number,
  ): Promise<[string, number, number, number]>;
}

const SPECS: Record<keyof FairLayoutCommands, LuaScriptSpec> = {
  tqFairLayout: { numberOfKeys: 2, file: 'fair-layout.lua' },
};
const SCRIPTS = new LuaScripts<FairLayoutCommands>(FAIR_LUA_DIR, SPECS);

interface Layout {
  lanes: string[];
  fairKeys: boolean;
}

/**
 * The keys a queue's backlog lives in: its lanes (none below two, see `FairQueueConfig.laneOf`)
 * and whether a tenant's backlog is a fair-key zset (fair-fairkey.lua).
 */
export function layoutOf(config: FairQueueConfig): string {
  const { lanes, fairKey } = config.options;
  const layout: Layout = {
    lanes: lanes.length > 1 ? lanes.map((lane) => lane.name) : [],
    fairKeys: fairKey !== undefined,
  };
  return JSON.stringify(layout);
}

/** A layout in words, as the warning names it: `lanes a, b; fair keys`. */
function describe(json: string): string {
  let layout: Layout;
  try {
    layout = JSON.parse(json) as Layout;
  } catch {
    return json;
  }
  const lanes = layout.lanes?.length ? `lanes ${layout.lanes.join(', ')}` : 'no lanes';
  return `${lanes}; ${layout.fairKeys ? 'fair keys' : 'no fair keys'}`;
}

/** What `checkLayout` found: the layout another process ran the queue with, and its warning. */
export interface LayoutChange {
  before: string;
  warning: string;
  /** The ids each script call moved. */
  movedPerCall: number[];
}

/**
 * Records the backlog layout this process's gate runs `config`'s queue with and, when another
 * process ran it with other lanes or fair keys since, takes the backlog queued under those into
 * this gate's keys (fair-layout.lua, about `batch` ids a script call, off the job path). Returns
 * what changed (the caller puts the tenants back in turn and warns), or undefined.
 */
export async function checkLayout(
  client: RedisClient,
  config: FairQueueConfig,
  batch = LAYOUT_BATCH,
): Promise<LayoutChange | undefined> {
  const ours = layoutOf(config);
  const { lanes, defaultLane } = config.options;
  const scripts = SCRIPTS.on(client);
  const call = () =>
    scripts.tqFairLayout(
      config.base,
      `${config.jobPrefix}delayed`,
      config.script,
      ours,
      lanes.length > 1 ? defaultLane : '',
      batch,
    );
  const [before, held, moved, more] = await call();
  if (!before) return undefined;
  const movedPerCall = [Number(moved)];
  for (let left = Number(more); left === 1;) {
    const [, , next, again] = await call();
    movedPerCall.push(Number(next));
    left = Number(again);
  }
  return {
    before,
    movedPerCall,
    warning: Messages.fairLayoutChanged(
      config.definition.name,
      describe(before),
      describe(ours),
      movedPerCall.reduce((sum, n) => sum + n, 0),
      Number(held),
    ),
  };
}
