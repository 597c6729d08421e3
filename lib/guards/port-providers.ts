import { Provider } from '@nestjs/common';
import { InvalidTenantQueueOptionsError } from '../core/errors';
import {
  ActorPermissionChecker,
  EntitlementChecker,
  TenantDirectory,
} from '../core/types/tenant-directory.interface';
import { TenantQueuePortOptions, TenantQueuePortProvider } from './tenant-queue-ports.interface';
import { Messages } from '../tenant-queue.messages';
import {
  PermissiveTenantDirectory,
  UnconfiguredActorPermissionChecker,
  UnconfiguredEntitlementChecker,
} from '../core/tenants/default-ports';

const SHAPES = ['useClass', 'useExisting', 'useFactory', 'useValue'] as const;

/** The port tokens every app gets, whether or not it configured them. */
export const PORT_TOKENS = [TenantDirectory, EntitlementChecker, ActorPermissionChecker];

/** Providers of the three ports: the application's, or the documented defaults. */
export function portProviders(ports: TenantQueuePortOptions): Provider[] {
  return [
    portProvider(TenantDirectory, 'directory', ports.directory, PermissiveTenantDirectory),
    portProvider(
      EntitlementChecker,
      'entitlementChecker',
      ports.entitlementChecker,
      UnconfiguredEntitlementChecker,
    ),
    portProvider(
      ActorPermissionChecker,
      'actorPermissionChecker',
      ports.actorPermissionChecker,
      UnconfiguredActorPermissionChecker,
    ),
  ];
}

function portProvider<T>(
  token: symbol,
  option: string,
  given: TenantQueuePortProvider<T> | undefined,
  fallback: new () => T,
): Provider {
  if (given === undefined || given === null) return { provide: token, useValue: new fallback() };
  const shapes =
    typeof given === 'object' ? SHAPES.filter((shape) => (given as any)[shape] !== undefined) : [];
  if (shapes.length !== 1) {
    throw new InvalidTenantQueueOptionsError(
      Messages.invalidOptions(
        option,
        'must have exactly one of useClass, useExisting, useFactory, useValue',
      ),
    );
  }
  return { ...given, provide: token } as Provider;
}

/** The options without the port keys (for modules that build their providers by hand). */
export function omitPortOptions<T extends object>(
  options: T,
): Omit<T, keyof TenantQueuePortOptions> {
  const {
    directory: _directory,
    entitlementChecker: _entitlementChecker,
    actorPermissionChecker: _actorPermissionChecker,
    ...rest
  } = options as T & TenantQueuePortOptions;
  return rest;
}
