import {
  CanActivate,
  Controller,
  ExecutionContext,
  Injectable,
  INestApplication,
  Module,
  Param,
  Post,
  UseGuards,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClsModule } from 'nestjs-cls';
import request from 'supertest';
import {
  InjectTenantQueue,
  InvalidTenantQueueOptionsError,
  TenantQueue,
  TenantQueueModule,
  TenantQueueModuleOptions,
  TenantRequiredGuard,
} from '../../../lib';
import { SeenJobs, ThumbnailProcessor, AuditProcessor } from '../../fixtures/thumbnail.app';
import { redisConnection, uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';

/** Stands in for the app's own auth: sets req.user after the tenant middleware has run. */
@Injectable()
class FakeAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest();
    const token = req.headers.authorization?.replace('Bearer ', '');
    if (token) req.user = { sub: `user-of-${token}`, org: { tenant: token } };
    return true;
  }
}

@Controller()
class LateController {
  constructor(@InjectTenantQueue('thumbnails') private readonly queue: TenantQueue) {}

  @Post('jwt')
  @UseGuards(FakeAuthGuard, TenantRequiredGuard)
  async viaJwt() {
    return this.queue.add('resize', { file: 'jwt.png' });
  }

  @Post('t/:tenantId/files')
  @UseGuards(TenantRequiredGuard)
  async viaPath(@Param('tenantId') _tenantId: string) {
    return this.queue.add('resize', { file: 'path.png' });
  }
}

@Injectable()
class AppConfig {
  readonly prefix = uniquePrefix();
  options(): TenantQueueModuleOptions {
    return {
      connection: redisConnection(),
      prefix: this.prefix,
      resolution: { order: ['jwtClaim', 'pathParam', 'header'], jwtClaim: 'org.tenant' },
    };
  }
}

@Module({ providers: [AppConfig], exports: [AppConfig] })
class ConfigModule {}

@Injectable()
class OptionsFactory {
  constructor(private readonly config: AppConfig) {}
  createTenantQueueOptions(): TenantQueueModuleOptions {
    return this.config.options();
  }
}

@Module({ imports: [ConfigModule], providers: [OptionsFactory], exports: [OptionsFactory] })
class OptionsFactoryModule {}

const variants: [string, () => any][] = [
  ['forRoot', () => TenantQueueModule.forRoot(new AppConfig().options())],
  [
    'forRootAsync useFactory',
    () =>
      TenantQueueModule.forRootAsync({
        imports: [ConfigModule],
        inject: [AppConfig],
        useFactory: (config: AppConfig) => config.options(),
      }),
  ],
  [
    'forRootAsync useClass',
    () => TenantQueueModule.forRootAsync({ imports: [ConfigModule], useClass: OptionsFactory }),
  ],
  [
    'forRootAsync useExisting',
    () =>
      TenantQueueModule.forRootAsync({
        imports: [OptionsFactoryModule],
        useExisting: OptionsFactory,
      }),
  ],
];

describe.each(variants)('TenantQueueModule.%s', (_label, root) => {
  let app: INestApplication;

  beforeAll(async () => {
    @Module({
      imports: [
        ClsModule.forRoot({ global: true, middleware: { mount: true } }),
        root(),
        TenantQueueModule.registerQueue({ name: 'thumbnails' }, { name: 'audit' }),
      ],
      controllers: [LateController],
      providers: [SeenJobs, ThumbnailProcessor, AuditProcessor],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication();
    await app.init();
  });

  afterAll(() => app.close());

  it('resolves a JWT claim set by auth that runs after the middleware', async () => {
    const res = await request(app.getHttpServer())
      .post('/jwt')
      .set('authorization', 'Bearer initech')
      .expect(201);
    expect(res.body.tenantId).toBe('initech');
    const seen = app.get(SeenJobs);
    await waitFor(() => seen.jobs.some((j) => j.data.file === 'jwt.png'), 'the job');
    const job = seen.jobs.find((j) => j.data.file === 'jwt.png')!;
    expect(job.tenantId).toBe('initech');
    expect(job.actor).toEqual({ type: 'user', id: 'user-of-initech' });
    expect(job.strategy).toBe('jwtClaim');
  });

  it('resolves a path parameter after routing', async () => {
    const res = await request(app.getHttpServer()).post('/t/umbrella/files').expect(201);
    expect(res.body.tenantId).toBe('umbrella');
  });

  it('rejects a malformed path parameter with 400', async () => {
    await request(app.getHttpServer()).post('/t/bad%20tenant/files').expect(400);
  });
});

describe('option validation', () => {
  it.each([
    [{ resolution: { order: ['cookie'] } }, 'resolution.order'],
    [{ resolution: { header: 'bad header!' } }, 'resolution.header'],
    [{ prefix: 'has space' }, 'prefix'],
    [{ tenantIdPattern: '^a$' }, 'tenantIdPattern'],
    [{ resolution: { order: ['custom'] } }, 'resolution.custom'],
    [{ unknownOption: true }, 'unknownOption'],
  ])('fails fast on %j naming %s', async (bad, field) => {
    @Module({
      imports: [
        ClsModule.forRoot({ global: true }),
        TenantQueueModule.forRoot({ connection: redisConnection(), ...(bad as object) } as any),
      ],
    })
    class BadModule {}
    const attempt = Test.createTestingModule({ imports: [BadModule] }).compile();
    await expect(attempt).rejects.toBeInstanceOf(InvalidTenantQueueOptionsError);
    await expect(Test.createTestingModule({ imports: [BadModule] }).compile()).rejects.toThrow(
      `"${field}"`,
    );
  });
});

describe('forRootAsync when the factory does not give options', () => {
  const compile = (root: unknown) => {
    @Module({ imports: [root as never, TenantQueueModule.registerQueue({ name: 'thumbnails' })] })
    class AppModule {}
    return Test.createTestingModule({ imports: [AppModule] }).compile();
  };

  it.each([
    ['returns undefined (a block body without return)', () => undefined],
    ['resolves to null', async () => null],
  ])(
    'useFactory that %s: a typed error naming the factory and the fix',
    async (_label, factory) => {
      const compiling = compile(TenantQueueModule.forRootAsync({ useFactory: factory as never }));
      await expect(compiling).rejects.toBeInstanceOf(InvalidTenantQueueOptionsError);
      await expect(compiling).rejects.toThrow(
        /forRootAsync's useFactory gave (undefined|null), not the options object: return \{ connection, \.\.\. \}/,
      );
    },
  );

  it('useClass without createTenantQueueOptions(): a typed error naming the method', async () => {
    class NoMethod {}
    const compiling = compile(TenantQueueModule.forRootAsync({ useClass: NoMethod as never }));
    await expect(compiling).rejects.toBeInstanceOf(InvalidTenantQueueOptionsError);
    await expect(compiling).rejects.toThrow(/NoMethod has no createTenantQueueOptions\(\) method/);
  });

  it.each([undefined, null])(
    'forRoot(%p) (a plain JS caller): the typed error, not a TypeError',
    (given) => {
      // Before: "TypeError: Cannot convert undefined or null to object" from Nest's module builder.
      expect(() => TenantQueueModule.forRoot(given as never)).toThrow(
        InvalidTenantQueueOptionsError,
      );
      expect(() => TenantQueueModule.forRoot(given as never)).toThrow(
        /forRoot\(\) was given (undefined|null), not the options object: pass \{ connection, \.\.\. \}/,
      );
    },
  );

  it("a factory's own error reaches the app unchanged", async () => {
    const compiling = compile(
      TenantQueueModule.forRootAsync({
        useFactory: async () => {
          throw new Error('vault down');
        },
      }),
    );
    await expect(compiling).rejects.toThrow('vault down');
  });
});
