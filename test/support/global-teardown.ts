export default async function globalTeardown(): Promise<void> {
  await globalThis.__TQ_REDIS__?.stop();
}
