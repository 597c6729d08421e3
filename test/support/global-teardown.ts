import type { Config } from '@jest/types';
import { checkScriptTrace } from './script-coverage';

export default async function globalTeardown(globalConfig: Config.GlobalConfig): Promise<void> {
  await globalThis.__TQ_REDIS__?.stop();
  await globalThis.__TQ_CLUSTER__?.stop();
  checkScriptTrace(globalConfig);
}
