import { TestingModule } from '@nestjs/testing';
import {
  InMemoryTenantDirectory,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { captureWarningsAndErrors } from '../../support/collecting-logger';
import { bootTestModule, testRootImports } from '../../support/test-module';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

const running = new Set<string>();
let release: () => void = () => undefined;
const held = new Promise<void>((resolve) => (release = resolve));

@TenantProcessor('wiped', { concurrency: 4 })
class HeldProcessor extends TenantWorkerHost {
  async process(job: TenantJob) {
    running.add(job.id!);
    await held;
    return 'done';
  }
}

describe('Queue.obliterate({ force: true }) while the workers run its jobs', () => {
  let moduleRef: TestingModule;
  let lines: string[] = [];

  beforeAll(async () => {
    lines = captureWarningsAndErrors();
    moduleRef = await bootTestModule({
      imports: [
        ...testRootImports(uniquePrefix('wiped'), {
          directory: { useValue: new InMemoryTenantDirectory([{ id: 'acme' }]) },
        }),
        TenantQueueModule.registerQueue({ name: 'wiped', attempts: 3 }),
      ],
      providers: [HeldProcessor],
    });
  });

  afterAll(async () => {
    release();
    await moduleRef?.close();
    jest.restoreAllMocks();
  });

  it('logs one warning per job it removed mid-run, naming it and why, and no error', async () => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue('wiped');
    for (let i = 0; i < 6; i++) await queue.addForTenant('acme', 'held', {});
    await waitFor(() => running.size === 4, 'four jobs running');
    await queue.bullQueue.obliterate({ force: true });
    release();
    const warned = () =>
      lines.filter((line) => line.includes('was removed from Redis while it ran'));
    await waitFor(() => warned().length === 4, 'a warning for each running job');
    // BullMQ's second refusal of each (recording the failure) is not a second line.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(warned()).toHaveLength(4);
    for (const id of running) {
      expect(warned().filter((line) => line.includes(`job ${id} was removed`))).toEqual([
        expect.stringMatching(
          /^warn .*job=\S+ .*worker wiped: job \S+ was removed .*moveToFinished/,
        ),
      ]);
    }
    expect(lines.filter((line) => line.startsWith('error'))).toEqual([]);
    expect(lines.filter((line) => line.includes('Missing key'))).toEqual([]);
  });
});
