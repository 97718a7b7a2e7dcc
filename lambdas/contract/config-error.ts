/**
 * The one configuration error: a deployment, a process or a recorded row that cannot work with
 * the settings it was given. The message names what to fix (the variable, the deploy key, the
 * template version), never a secret's value. Thrown at a cold start, by `npm start`, by the CDK
 * app (deploy settings), and returned (not thrown) by the sender when this deployment cannot send
 * a recorded row (its template version or its channel's transport is missing), which then fails
 * as `configuration_error`. Lives in the contract (plain, imports nothing) so that runtime, CDK and
 * local stack all raise the same type.
 */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
