export default async function globalTeardown(): Promise<void> {
  await globalThis.__TQ_REDIS__?.stop();
  await globalThis.__TQ_CLUSTER__?.stop();
}
