import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { SeenJobs, thumbnailAppModule } from '../../fixtures/thumbnail.app';
import { uniquePrefix } from '../../support/redis-url';
import { testConnection } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

describe('HTTP -> queue -> worker', () => {
  let app: INestApplication;
  let seen: SeenJobs;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        thumbnailAppModule({
          connection: testConnection(),
          prefix: uniquePrefix(),
          environment: 'test',
          resolution: { order: ['header', 'subdomain'] },
          resolveActor: (req) =>
            req.headers['x-user-id']
              ? { type: 'user', id: String(req.headers['x-user-id']) }
              : { type: 'anonymous' },
        }),
      ],
    }).compile();
    app = moduleRef.createNestApplication();
    await app.init();
    seen = app.get(SeenJobs);
  });

  afterAll(async () => {
    await app.close();
  });

  it('carries tenant, locale, actor and correlation id from the request into the job', async () => {
    const res = await request(app.getHttpServer())
      .post('/thumbnails')
      .set('x-tenant-id', 'acme')
      .set('accept-language', 'de-DE,de;q=0.9,en;q=0.5')
      .set('x-request-id', 'req-123')
      .set('x-user-id', 'u-7')
      .send({ file: 'cat.png' })
      .expect(201);
    expect(res.body.tenantId).toBe('acme');

    await waitFor(() => seen.jobs.some((j) => j.name === 'thumbnail-made'), 'nested job');
    const job = seen.jobs.find((j) => j.name === 'resize')!;
    expect(job).toEqual({
      name: 'resize',
      data: { file: 'cat.png' },
      tenantId: 'acme',
      locale: 'de-DE',
      correlationId: 'req-123',
      actor: { type: 'user', id: 'u-7' },
      strategy: 'header',
      hasEnvelopeInData: false,
    });
    const nested = seen.jobs.find((j) => j.name === 'thumbnail-made')!;
    expect(nested).toEqual({
      name: 'thumbnail-made',
      data: { source: res.body.jobId },
      tenantId: 'acme',
      locale: 'de-DE',
      correlationId: 'req-123',
      actor: { type: 'user', id: 'u-7' },
      strategy: 'inherited',
      hasEnvelopeInData: false,
    });
  });

  it('keeps two tenants apart when their requests interleave', async () => {
    const before = seen.jobs.length;
    const server = app.getHttpServer();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request(server)
          .post('/thumbnails')
          .set('x-tenant-id', i % 2 ? 'tenant-b' : 'tenant-a')
          .send({ file: `${i % 2 ? 'b' : 'a'}-${i}.png` })
          .expect(201),
      ),
    );
    await waitFor(() => seen.jobs.length >= before + 40, '20 jobs and 20 nested jobs');
    for (const job of seen.jobs.slice(before).filter((j) => j.name === 'resize')) {
      expect(job.tenantId).toBe(String(job.data.file).startsWith('a-') ? 'tenant-a' : 'tenant-b');
    }
  });

  it('resolves the tenant from the subdomain when there is no header', async () => {
    const res = await request(app.getHttpServer())
      .post('/thumbnails')
      .set('host', 'globex.app.example.com')
      .send({ file: 'sub.png' })
      .expect(201);
    expect(res.body.tenantId).toBe('globex');
  });

  it('refuses a tenant-required route without a tenant, and writes nothing', async () => {
    const res = await request(app.getHttpServer())
      .post('/thumbnails')
      .set('host', 'localhost')
      .send({ file: 'x.png' })
      .expect(400);
    expect(res.body.message).toContain('x-tenant-id');
  });

  it.each(['../etc', 'a b', 'x'.repeat(65), '-leading-dash', 'ten:ant', '{tag}'])(
    'rejects the malformed tenant id %j with 400 before any handler runs',
    async (bad) => {
      const res = await request(app.getHttpServer())
        .get('/thumbnails/whoami')
        .set('x-tenant-id', bad)
        .expect(400);
      expect(res.body.message).toContain('Invalid tenant id');
    },
  );

  it('gives a route without a tenant no tenant, and a fresh correlation id', async () => {
    const res = await request(app.getHttpServer())
      .get('/thumbnails/whoami')
      .set('host', 'localhost')
      .expect(200);
    expect(res.body.tenantId).toBeNull();
    expect(res.body.correlationId).toMatch(/^[0-9a-f-]{36}$/);
  });
});
