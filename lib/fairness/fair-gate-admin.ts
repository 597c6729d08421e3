import { tenantLogFields } from '../core/context/tenant-log-fields';
import { GateReply } from './fair-gate.interface';

/** Most follow-up calls one admin operation makes for a recall (1,000 turns each). */
const MAX_RECALL_CALLS = 1000;

/**
 * Runs an admin operation of the gate (fair-admin.lua) and settles its reply. A recall of the
 * tenant's turns that a change starts (pause, cap, rate, floor) takes 1,000 of them a call
 * (fair-turns.lua), so no call holds Redis long: the rest follow here, call by call, before the
 * operation returns (past `MAX_RECALL_CALLS`, the tick goes on with it).
 */
export async function runAdmin(
  call: (op: string, value: string) => Promise<unknown[]>,
  op: string,
  value: string,
  settle: (reply: GateReply) => void,
): Promise<unknown[]> {
  let reply = await call(op, value);
  if (op === 'get' || op === 'floors') return reply;
  settle(reply as GateReply);
  for (let calls = 0; reply[4] === 1 && calls < MAX_RECALL_CALLS; calls++) {
    reply = await call('recall', '');
    settle(reply as GateReply);
  }
  return reply;
}

/**
 * A slow-lane change (enter, leave) in a reply's events began a recall of the tenant's turns,
 * 1,000 a call: the rest follows now, not a part a tick (a failure is logged; the tick goes on).
 */
export function recallRest(
  events: (string | number)[],
  gate: {
    definition: { name: string };
    upkeep: { closed: boolean };
    admin(tenantId: string, op: string): Promise<unknown>;
  },
  logger: { warn(line: string): void },
): void {
  for (let i = 0; i + 2 < events.length; i += 3) {
    if (events[i] !== 'enter' && events[i] !== 'leave') continue;
    const tenantId = String(events[i + 1]);
    gate.admin(tenantId, 'recall').catch((error) => {
      if (gate.upkeep.closed) return;
      logger.warn(
        `${tenantLogFields({ tenantId })} fair recall ${gate.definition.name}: ${error} ` +
          '(the tick goes on with it)',
      );
    });
  }
}
