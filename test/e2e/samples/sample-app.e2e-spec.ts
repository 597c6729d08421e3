import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { AppModule } from '../../../sample-app/app.module';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';

/** Walks the README's curl tour of the sample app. */
describe('sample app: the thumbnail flow for two tenants', () => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        AppModule.register({ redisUrl: process.env.REDIS_URL!, prefix: uniquePrefix('sample') }),
      ],
    }).compile();
    app = moduleRef.createNestApplication();
    await app.init();
  });

  afterAll(() => app.close());

  it("makes each tenant its own thumbnails and hides the other tenant's jobs", async () => {
    const server = app.getHttpServer();
    const upload = (tenant: string, file: string) =>
      request(server).post('/uploads').set('x-tenant-id', tenant).send({ file }).expect(201);
    const a = await upload('acme', 'cat.png');
    await upload('globex', 'dog.png');
    await upload('acme', 'bird.jpg');

    const list = async (tenant: string) =>
      (await request(server).get('/uploads/thumbnails').set('x-tenant-id', tenant)).body as {
        thumbnail: string;
      }[];
    await waitFor(async () => (await list('acme')).length === 2, 'acme thumbnails');
    await waitFor(async () => (await list('globex')).length === 1, 'globex thumbnail');
    expect((await list('acme')).map((t) => t.thumbnail).sort()).toEqual([
      'bird.thumb.jpg',
      'cat.thumb.png',
    ]);
    expect((await list('globex')).map((t) => t.thumbnail)).toEqual(['dog.thumb.png']);

    const own = await request(server)
      .get(`/uploads/jobs/${a.body.jobId}`)
      .set('x-tenant-id', 'acme');
    expect(own.body).toMatchObject({ state: 'completed', result: { thumbnail: 'cat.thumb.png' } });
    await request(server)
      .get(`/uploads/jobs/${a.body.jobId}`)
      .set('x-tenant-id', 'globex')
      .expect(404);
    await request(server).post('/uploads').send({ file: 'x.png' }).expect(400);
  });
});
