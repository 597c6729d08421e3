export const Messages = {
  missingTenant: (queue: string, name: string) =>
    `Job "${name}" on queue "${queue}" is tenant-scoped but no tenant is in context. ` +
    `Enqueue it inside a request that carries a tenant, inside a running tenant job, ` +
    `or use TenantQueue.addForTenant(tenantId, ...) for system work.`,
  missingTenantInContext: () =>
    `No tenant in the current context. Send the tenant (e.g. the "x-tenant-id" header) or wrap ` +
    `the call in TenantContext.run(tenantId, fn).`,
  invalidTenantId: (value: unknown, pattern: RegExp) =>
    `Invalid tenant id ${JSON.stringify(truncate(value))}: it must match ${pattern}. ` +
    `Use 1-64 characters of letters, digits, "_", "." or "-", starting with a letter or digit.`,
  invalidPayload: (queue: string, name: string, why: string) =>
    `Payload of job "${name}" on queue "${queue}" ${why}. Pass a plain JSON object; the module ` +
    `adds the "_tenant" envelope itself.`,
  invalidEnvelope: (why: string) =>
    `The job's "_tenant" envelope is invalid: ${why}. The job was not run. Enqueue jobs through ` +
    `TenantQueue so the envelope is built and validated for you.`,
  missingEnvelope: (queue: string, name: string) =>
    `Job "${name}" on tenant-scoped queue "${queue}" has no "_tenant" envelope, so it was not run ` +
    `under any tenant. Enqueue it through TenantQueue, or declare the job name in registerQueue({ systemJobs }).`,
  invalidOptions: (field: string, why: string) =>
    `Invalid TenantQueueModule option "${field}": ${why}.`,
  unknownQueue: (name: string) =>
    `Queue "${name}" is not registered. Add TenantQueueModule.registerQueue({ name: '${name}' }) ` +
    `to the imports of the module that uses it.`,
  processorNotHost: (className: string) =>
    `@TenantProcessor class ${className} must extend TenantWorkerHost and implement process(job).`,
  duplicateProcessor: (queue: string) =>
    `Two @TenantProcessor classes consume queue "${queue}". Use one class per queue and dispatch on job.name.`,
  tenantRequiredHttp: (header: string) =>
    `This route needs a tenant. Send it in the "${header}" header (or the way this app resolves tenants).`,
  tenantBacklogFull: (queue: string, tenantId: string, backlog: number, limit: number) =>
    `Tenant "${tenantId}" already has ${backlog} jobs waiting on fair queue "${queue}" (maxBacklog ` +
    `${limit}); nothing was enqueued. Retry later, or raise registerQueue({ fairness: { maxBacklog } }).`,
  fairnessOff: (queue: string) =>
    `Queue "${queue}" has no fairness. Register it with registerQueue({ name: '${queue}', fairness: {} }) ` +
    `to use TenantFairness on it.`,
  invalidFairnessValue: (what: string, why: string) =>
    `Invalid ${what}: ${why}. Pass a finite number in range, or null to clear the runtime override.`,
  slowLaneEnter: (queue: string, tenantId: string, failures: number) =>
    `tenant ${tenantId} entered the slow lane of queue "${queue}" after ${failures} failures; ` +
    `it gets a reduced share until its failures drop.`,
  slowLaneLeave: (queue: string, tenantId: string, failures: number) =>
    `tenant ${tenantId} left the slow lane of queue "${queue}" (${failures} recent failures).`,
};

function truncate(value: unknown): unknown {
  return typeof value === 'string' && value.length > 80 ? `${value.slice(0, 80)}...` : value;
}
