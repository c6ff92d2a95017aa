/**
 * Handler convention: every Lambda entry module exports `handler` (what AWS invokes) and
 * `createHandler(env, services)`, which the local runtime calls with the function's environment
 * from the synthesized template and local adapters. `handler = createHandler(process.env)`.
 */
export type Env = Record<string, string | undefined>;
export type HandlerFactory<S = unknown> = (
  env: Env,
  services?: S,
) => (event: any, context?: unknown) => Promise<unknown>;
