// @ts-check
// A TypeDoc plugin: names each entry point's module by the import path an app writes
// (`nestjs-tenant-queue/health`), not by its file (`health/index.ts`).
import { Converter, ReflectionKind } from 'typedoc';

/** Entry file folder (TypeDoc's default module name) -> import path (package.json "exports"). */
const IMPORT_PATHS = {
  index: 'nestjs-tenant-queue',
  health: 'nestjs-tenant-queue/health',
  testing: 'nestjs-tenant-queue/testing',
  dashboard: 'nestjs-tenant-queue/dashboard',
  'bullmq-compat': 'nestjs-tenant-queue/bullmq',
  'bull-board': 'nestjs-tenant-queue/bull-board',
  telemetry: 'nestjs-tenant-queue/telemetry',
};

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getReflectionsByKind(ReflectionKind.Module)) {
      const name = IMPORT_PATHS[/** @type {keyof typeof IMPORT_PATHS} */ (module.name)];
      if (!name) throw new Error(`typedoc: entry point "${module.name}" has no import path in ${import.meta.url}`);
      module.name = name;
    }
  });
}
