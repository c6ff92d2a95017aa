/**
 * The app's Lambda functions as the local runtime runs them: a function name or ARN maps to its
 * template resource, whose `stepwise:entry` module's `createHandler(env, services)` is created once
 * per function, with the function's environment as deployed plus the local settings.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { engineEntry } from '../../cdk/constructs/lambda-entry.ts';
import { ENTRY_METADATA, LAMBDA_STATEMACHINES_DIR } from '../../cdk/metadata.ts';
import type { HandlerFactory } from '../../core/env.ts';
import { STATEMACHINES_DIR } from '../../core/paths.ts';
import { arnToLogicalId, type IntrinsicContext, LOCAL_REGION, resolveIntrinsics } from './intrinsics.ts';
import { invokeLikeLambda, type LocalFunction, LocalRuntimeFault } from './lambda.ts';
import type { SynthesizedApp } from './synth.ts';

export interface FunctionRegistryOptions {
  /** Local adapters passed to every `createHandler(env, services)`. */
  services?: unknown;
  /** DynamoDB Local: its endpoint becomes `AWS_ENDPOINT_URL_DYNAMODB` of every function. */
  dynamo?: { endpoint: string };
  /** Added to (and overriding) every function's environment. */
  extraEnv?: Record<string, string>;
}

/** A function's handler, as its module's `createHandler` made it. */
export type FunctionHandler = (event: any, context: unknown) => unknown;

interface LoadedFunction extends LocalFunction {
  entry?: string;
  env: Record<string, string>;
  handler?: Promise<FunctionHandler>;
}

/**
 * Map the bundled workflow folder (`/var/task/statemachines`) to the repository's `statemachines/`.
 * A workflow folder elsewhere (a test fixture) needs `extraEnv.STATEMACHINES_DIR`: the template
 * does not say where the bundled folder came from.
 */
function localPath(value: string): string {
  return value === LAMBDA_STATEMACHINES_DIR || value.startsWith(`${LAMBDA_STATEMACHINES_DIR}/`)
    ? join(STATEMACHINES_DIR, value.slice(LAMBDA_STATEMACHINES_DIR.length))
    : value;
}

/**
 * The functions of a synthesized app, by key (`stack/logicalId`). A function's environment is its
 * template's, resolved, plus `AWS_REGION`, `AWS_LAMBDA_FUNCTION_NAME`, X-Ray tracing and EMF
 * metrics switched off (no daemon, and EMF would mix into a CLI's stdout), the DynamoDB Local
 * endpoint and `extraEnv`; its handler module is imported on its first invocation.
 */
export class FunctionRegistry {
  private readonly functions = new Map<string, LoadedFunction>();

  constructor(
    private readonly synthesized: SynthesizedApp,
    private readonly options: FunctionRegistryOptions,
  ) {}

  /**
   * The key of the function a name or ARN refers to: in `stack` first, when given, then in every
   * stack of the app; undefined when no stack has it.
   */
  keyOf(nameOrArn: string, stack?: string): string | undefined {
    const stacks = Object.keys(this.synthesized.templates);
    const searched = stack === undefined ? stacks : [stack, ...stacks.filter((s) => s !== stack)];
    const id = nameOrArn.startsWith('arn:') ? arnToLogicalId(nameOrArn) : nameOrArn;
    for (const s of searched) {
      const resources = this.synthesized.templates[s]!.Resources ?? {};
      const isFunction = (logicalId: string) => resources[logicalId]?.Type === 'AWS::Lambda::Function';
      const isNamed = (logicalId: string) => resources[logicalId]!.Properties?.FunctionName === id;
      const logicalId = isFunction(id) ? id : Object.keys(resources).find((l) => isFunction(l) && isNamed(l));
      if (logicalId) return `${s}/${logicalId}`;
    }
    return undefined;
  }

  /** The function with this key: its name, ARN, limits and environment (resolved once). */
  get(key: string): LocalFunction {
    return this.loaded(key);
  }

  /** The environment its handler is created with: the template's variables, resolved, with the local settings. */
  env(key: string): Readonly<Record<string, string>> {
    return this.loaded(key).env;
  }

  /**
   * The function's handler: its entry module imported and its handler created, once. A failed
   * import is not kept: fix the module and the next invocation retries.
   * @throws LocalRuntimeFault when the function has no entry module, or the module cannot be
   *   imported or has no `createHandler`.
   */
  handler(key: string): Promise<FunctionHandler> {
    const fn = this.loaded(key);
    fn.handler ??= this.createHandler(key, fn);
    fn.handler.catch(() => (fn.handler = undefined));
    return fn.handler;
  }

  /** Invoke the function with this key as Lambda does: JSON in and out, a thrown error as a `LambdaFunctionError`. */
  async invoke(key: string, payload: unknown): Promise<unknown> {
    return invokeLikeLambda(await this.handler(key), payload, this.get(key));
  }

  private loaded(key: string): LoadedFunction {
    let fn = this.functions.get(key);
    if (!fn) {
      fn = this.load(key);
      this.functions.set(key, fn);
    }
    return fn;
  }

  private load(key: string): LoadedFunction {
    const [stack, logicalId] = key.split('/') as [string, string];
    const template = this.synthesized.templates[stack]!;
    const ctx: IntrinsicContext = this.synthesized.contexts[stack]!;
    const resource = template.Resources![logicalId]!;
    const props = resource.Properties ?? {};
    const name = resolveIntrinsics<string>({ Ref: logicalId }, template, ctx);
    const templateVariables = (props.Environment as { Variables?: unknown })?.Variables ?? {};
    const variables = resolveIntrinsics<Record<string, unknown>>(templateVariables, template, ctx);
    const entry = resource.Metadata?.[ENTRY_METADATA];
    return {
      name,
      arn: resolveIntrinsics<string>({ 'Fn::GetAtt': [logicalId, 'Arn'] }, template, ctx),
      timeoutSeconds: Number(props.Timeout ?? 3),
      memoryMB: Number(props.MemorySize ?? 128),
      env: this.environment(name, variables, ctx),
      ...(typeof entry === 'string' && { entry }),
    };
  }

  /** The environment of function `name`: its template's variables (resolved), with the local settings. */
  private environment(name: string, variables: Record<string, unknown>, ctx: IntrinsicContext): Record<string, string> {
    return {
      AWS_REGION: ctx.region ?? LOCAL_REGION,
      AWS_DEFAULT_REGION: ctx.region ?? LOCAL_REGION,
      AWS_LAMBDA_FUNCTION_NAME: name,
      ...Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, localPath(String(v))])),
      POWERTOOLS_TRACE_ENABLED: 'false',
      POWERTOOLS_METRICS_DISABLED: 'true',
      ...(this.options.dynamo && { AWS_ENDPOINT_URL_DYNAMODB: this.options.dynamo.endpoint }),
      ...this.options.extraEnv,
    };
  }

  private async createHandler(key: string, fn: LoadedFunction): Promise<FunctionHandler> {
    if (!fn.entry) {
      const why = 'the local runtime cannot tell which module it runs';
      throw new LocalRuntimeFault(`function ${key} has no "${ENTRY_METADATA}" metadata: ${why}`);
    }
    let mod: { createHandler?: HandlerFactory };
    try {
      mod = await import(pathToFileURL(engineEntry(fn.entry)).href);
    } catch (e) {
      // Loud, like a missing handler: a catcher must not turn a broken module into a fallback reply.
      throw new LocalRuntimeFault(`cannot import ${fn.entry}: ${(e as Error).message}`);
    }
    if (typeof mod.createHandler !== 'function') {
      throw new LocalRuntimeFault(`${fn.entry} does not export createHandler(env, services)`);
    }
    return mod.createHandler(fn.env, this.options.services);
  }
}
