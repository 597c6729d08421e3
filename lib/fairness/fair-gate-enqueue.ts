import { Job, type Queue } from 'bullmq';
import { TenantBacklogFullError } from './errors';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { PreparedJob, directDispatcher } from '../core/queues/job-dispatcher.interface';
import { hasCallerJobId } from '../core/queues/tenant-queue';
import { Messages } from '../tenant-queue.messages';
import { bullClient, storedJobOptions } from '../core/bullmq';
import { FairCommands, fairCommands, gateKeys } from './fair-gate.script';
import { FairQueueConfig } from './fair-queue-config';
import { ResolvedFairnessOptions } from './fairness-options';
import {
  FairHint,
  FairHints,
  GateReply,
  HOLD_UNTIL_MS,
  SYSTEM_TENANT,
  TURN_PLACEHOLDER,
} from './fair-gate.interface';

/** BullMQ's own check of a job's options (`Job#validateOptions`, protected on both majors). */
interface Validating {
  validateOptions(json: { data: string }): void;
}
/** The one argument `validateOptions` reads (the data's size), reused for every job. */
const STORED = { data: '' };
const NO_ARGS: string[] = [];
/**
 * Most jobs one store call writes (6 arguments each; ~25 µs of Redis a job): a bigger batch is
 * one MULTI of such calls, atomic as a whole (BullMQ 6's own addBulk is a pipeline, not atomic).
 */
const STORE_MAX_JOBS = 2000;
const STORE_MAX_ARGS = STORE_MAX_JOBS * 6;

/**
 * The fair gate's enqueue path (`FairGate.dispatch`).
 * - A batch wholly by turn, with no directory hints and only options BullMQ's plain add just
 *   stores: one script call (`fair-turn-store.lua`; past 2,000 jobs, one MULTI of such calls)
 *   writes each job as that add would, at its turn level or held in the gate, and kicks the gate
 *   when it held a tenant's first job. No script call a job, no placeholder to take back: a job
 *   is written once, at its place.
 * - Any other batch: BullMQ's own add of each job (held in its delayed set, or at the placeholder
 *   priority where it may take its turn at once) and the gate's call in one MULTI:
 *   `fair-enqueue.lua`, whose admissions go to the gate's `settle`, or for a batch wholly by turn
 *   with no hints the lean `fair-turn-add.lua`.
 */
export class FairGateEnqueue {
  private readonly definition: TenantQueueDefinition;
  private readonly options: ResolvedFairnessOptions;

  constructor(
    private readonly config: FairQueueConfig,
    private readonly hints: (tenants: string[]) => Promise<FairHints>,
    private readonly settle: (reply: GateReply) => void,
    private readonly kick: () => void,
  ) {
    this.definition = config.definition;
    this.options = config.options;
  }

  /**
   * Enqueue path of the queue: BullMQ's own add of each job (held in its delayed set) and the
   * gate's record of their ids and turns, then whatever the window admits, in one MULTI: a
   * refused call (a backlog full) takes back what it wrote, and no job's data crosses the
   * network twice.
   */
  async dispatch(queue: Queue, jobs: PreparedJob[]): Promise<void> {
    // A delayed job would hold a slot while it waits: it goes to BullMQ directly, after the gate
    // took the others (its lane and fair key were checked with the job, by the fairness feature's
    // job check in TenantQueue's prepare: the gate's refusal, a backlog full, is the only one left).
    const delayed = jobs.filter((job) => (job.opts.delay ?? 0) > 0);
    const gated = delayed.length ? jobs.filter((job) => !((job.opts.delay ?? 0) > 0)) : jobs;
    if (gated.length) await this.enqueue(queue, gated);
    if (delayed.length) {
      await directDispatcher.dispatch(
        queue,
        delayed.map((job) => {
          const opts = this.config.laneOf(job)[1] as PreparedJob['opts'];
          return { ...job, opts: this.config.lanes ? { ...opts, priority: 2 } : opts };
        }),
      );
    }
  }

  private async enqueue(queue: Queue, gated: PreparedJob[]): Promise<void> {
    const tenants = [...new Set(gated.map((job) => job.tenantId ?? SYSTEM_TENANT))];
    const hints: (string | FairHint)[] = [];
    for (const [tenant, hint] of await this.hints(tenants)) hints.push(tenant, hint);
    const client = await bullClient(queue);
    const commands = fairCommands(client);
    // BullMQ's Job of each add: its options normalized and checked (it throws here, before
    // anything is written).
    const bulls: Job[] = new Array(gated.length);
    const places: string[] = new Array(gated.length);
    // Every job at its turn, stored as BullMQ's plain add stores it, and no hints to write: one
    // call writes the jobs and their turns (fair-turn-store.lua), a MULTI of such calls for a
    // batch past STORE_MAX_JOBS.
    let store = this.config.turnsAtAdd && hints.length === 0;
    const stored: string[] = store ? [] : NO_ARGS;
    for (let i = 0; i < gated.length; i++) {
      const job = gated[i];
      const [place, opts] = this.config.placeOf(job);
      const bull = new Job(queue, job.name, job.data, opts as never, job.opts.jobId);
      // An id the module drew is the job's id only, not one of the options the caller gave: not
      // stored in them (BullMQ takes the id apart; 28 bytes less a queued job).
      if (!hasCallerJobId(job)) bull.opts.jobId = undefined;
      // `delay: 0` is no delay: not stored, since a `delay` in a job's stored options is how a
      // worker knows the gate admitted it (FairGate.holdsNoSlot).
      if (bull.opts.delay === 0) bull.opts.delay = undefined;
      bulls[i] = bull;
      places[i] = place;
      if (!store) continue;
      const storedOpts = storedJobOptions(bull);
      if (storedOpts === undefined) {
        store = false;
        continue;
      }
      const data = JSON.stringify(job.data === undefined ? {} : job.data);
      STORED.data = data;
      (bull as unknown as Validating).validateOptions(STORED);
      const tenant = job.tenantId ?? SYSTEM_TENANT;
      stored.push(job.opts.jobId, tenant, job.name, data, storedOpts, String(bull.timestamp));
    }
    const { base, script } = this.config;
    if (store) {
      if (stored.length <= STORE_MAX_ARGS) {
        const [, kick] = await commands.tqFairTurnStore(gateKeys(base), script, stored);
        if (kick === 1) this.kick();
        return;
      }
      // A bigger batch: one MULTI of store calls, each bounded, the whole atomic; a later call
      // sees what an earlier one wrote (a tenant's levels go on, an id already written is known).
      const batch = client.multi();
      for (let at = 0; at < stored.length; at += STORE_MAX_ARGS) {
        const chunk = stored.slice(at, at + STORE_MAX_ARGS);
        (batch as unknown as FairCommands).tqFairTurnStore(gateKeys(base), script, chunk);
      }
      const replies = await execOrThrow(batch);
      if (replies.some(([, reply]) => (reply as [string, number])[1] === 1)) this.kick();
      return;
    }
    const multi = client.multi();
    const args: string[] = [];
    // Priority by turn: a job that may skip the gate at its turn (no priority of its own, not
    // lifo) is added at the placeholder priority instead of held (fair-turns.lua), 'd' in flags.
    let flags = '';
    // One clock for the call: each held job is due at HOLD_UNTIL_MS exactly (see fair-bull.lua).
    const timestamp = Date.now();
    const delay = HOLD_UNTIL_MS - timestamp;
    for (let i = 0; i < gated.length; i++) {
      const job = gated[i];
      const bull = bulls[i];
      const place = places[i];
      const turn = this.config.turnsAtAdd && !job.opts.priority && !job.opts.lifo;
      // BullMQ's Job copies the options it is given: the placeholder (or the hold) is set on its
      // copy, no object made here per job. A held add carries the call's timestamp, how the
      // script knows it is new; a job at the placeholder is known by its score, and keeps
      // BullMQ's own timestamp.
      if (turn) bull.opts.priority = bull.priority = TURN_PLACEHOLDER;
      else {
        bull.opts.timestamp = bull.timestamp = timestamp;
        bull.opts.delay = bull.delay = delay;
      }
      // Queued on the MULTI at once (nothing is sent before exec).
      void bull.addJob(multi as never, {});
      args.push(job.opts.jobId, job.tenantId ?? SYSTEM_TENANT, place);
      if (this.config.turnsAtAdd) flags += turn ? 'd' : '.';
    }
    const { dispatchBatch, maxBacklog } = this.options;
    // Every job at its turn and no hints to write: the lean call (fair-turn-add.lua), which
    // composes only what turns need and leaves the dispatch to a kick when it queued a job in the
    // gate.
    const lean = this.config.turnsAtAdd && hints.length === 0 && !flags.includes('.');
    if (lean) {
      const pairs: string[] = [];
      for (let i = 0; i < args.length; i += 3) pairs.push(args[i], args[i + 1]);
      (multi as unknown as FairCommands).tqFairTurnAdd(gateKeys(base), script, pairs);
    } else {
      (multi as unknown as FairCommands).tqFairEnqueue(
        gateKeys(base),
        script,
        dispatchBatch,
        maxBacklog,
        JSON.stringify(hints),
        timestamp,
        flags,
        args,
      );
    }
    const replies = await execOrThrow(multi);
    if (lean) {
      if ((replies[replies.length - 1][1] as [string, number])[1] === 1) this.kick();
      return;
    }
    const [status, second, third, woken] = replies[replies.length - 1][1] as [
      string,
      string[] | string,
      number,
      string[]?,
    ];
    if (status === 'full') {
      const [tenant, backlog] = [second as string, Number(third)];
      throw new TenantBacklogFullError(
        this.definition.name,
        tenant,
        backlog,
        Messages.tenantBacklogFull(this.definition.name, tenant, backlog, maxBacklog),
      );
    }
    this.settle([[], second as string[], third, woken]);
  }
}

/** Runs a MULTI and gives its `[error, reply]` pairs, or throws the first command's error. */
async function execOrThrow(multi: {
  exec(): Promise<[Error | null, unknown][] | null>;
}): Promise<[Error | null, unknown][]> {
  const results = (await multi.exec()) ?? [];
  for (const [error] of results) if (error) throw error;
  return results;
}
