import { ClsModule, ClsServiceManager } from 'nestjs-cls';
import { Test } from '@nestjs/testing';
import { Logger } from '@nestjs/common';
import { FairGateUpkeep } from './fair-gate-upkeep';

describe('FairGateUpkeep', () => {
  it('runs its tick outside the tenant context of whoever asks for it (a wake armed by an add)', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ClsModule.forRoot({ global: true })],
    }).compile();
    const cls = ClsServiceManager.getClsService();
    const seen: unknown[] = [];
    const upkeep = new FairGateUpkeep(
      'q',
      1000,
      {
        runTick: async () => {
          seen.push(cls.isActive() ? cls.get('tenant') : 'no context');
        },
        settleCalls: async () => undefined,
        callsInFlight: () => false,
      },
      new Logger('test'),
    );
    await cls.run(async () => {
      cls.set('tenant', 'acme');
      await upkeep.tick();
      upkeep.wakeIn(5);
    });
    // The wake's tick, however late a busy machine fires its timer.
    while (seen.length < 2) await new Promise((done) => setTimeout(done, 10));
    expect(seen).toEqual(['no context', 'no context']);
    await upkeep.close();
    await moduleRef.close();
  });
});
