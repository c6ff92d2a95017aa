/**
 * Resolve CloudFormation intrinsics in a synthesized template to local placeholder values, so the
 * local runtime can read the deployed state machine definitions and Lambda environments without
 * an AWS account. Placeholder ARNs always end in the resource's logical id (`arnToLogicalId`
 * inverts them); names are the resource's physical-name property, or the logical id.
 */
import { DefinitionError } from '../core/errors.ts';

/** The parts of a CloudFormation resource the local runtime reads. */
export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
  Condition?: string;
}

/** A synthesized CloudFormation template (the sections intrinsics can refer to). */
export interface CfnTemplate {
  Resources?: Record<string, CfnResource>;
  Parameters?: Record<string, { Default?: unknown }>;
  Conditions?: Record<string, unknown>;
  Mappings?: Record<string, Record<string, Record<string, unknown>>>;
  Outputs?: Record<string, { Value: unknown; Export?: { Name: unknown } }>;
}

/** Where the template is "deployed" locally. */
export interface TokenContext {
  /** `AWS::StackName`. @default 'Stack' */
  stackName?: string;
  /** `AWS::Region`. @default LOCAL_REGION */
  region?: string;
  /** `AWS::AccountId`. @default LOCAL_ACCOUNT */
  accountId?: string;
  /** Every template of the app by stack name, for `Fn::ImportValue` (cross-stack references). */
  templates?: Record<string, CfnTemplate>;
}

export const LOCAL_REGION = 'us-east-1';
export const LOCAL_ACCOUNT = '123456789012';

/** `Ref: AWS::NoValue` removes the property (or list element) that holds it. */
const NO_VALUE = Symbol('AWS::NoValue');

/** How each resource type's placeholder ARN is shaped (`{id}` is the logical id). Others: `arn:aws:<service>:<region>:<account>:<type>/{id}`. */
const ARN_SHAPES: Record<string, string> = {
  'AWS::Lambda::Function': 'lambda:{region}:{account}:function:{id}',
  'AWS::StepFunctions::StateMachine': 'states:{region}:{account}:stateMachine:{id}',
  'AWS::StepFunctions::Activity': 'states:{region}:{account}:activity:{id}',
  'AWS::DynamoDB::Table': 'dynamodb:{region}:{account}:table/{id}',
  'AWS::DynamoDB::GlobalTable': 'dynamodb:{region}:{account}:table/{id}',
  'AWS::Events::EventBus': 'events:{region}:{account}:event-bus/{id}',
  'AWS::Events::Rule': 'events:{region}:{account}:rule/{id}',
  'AWS::Events::Connection': 'events:{region}:{account}:connection/{id}',
  'AWS::Events::ApiDestination': 'events:{region}:{account}:api-destination/{id}',
  'AWS::SQS::Queue': 'sqs:{region}:{account}:{id}',
  'AWS::SNS::Topic': 'sns:{region}:{account}:{id}',
  'AWS::S3::Bucket': 's3:::{id}',
  'AWS::IAM::Role': 'iam::{account}:role/{id}',
  'AWS::IAM::ManagedPolicy': 'iam::{account}:policy/{id}',
  'AWS::Logs::LogGroup': 'logs:{region}:{account}:log-group:{id}',
  'AWS::KMS::Key': 'kms:{region}:{account}:key/{id}',
  'AWS::Scheduler::ScheduleGroup': 'scheduler:{region}:{account}:schedule-group/{id}',
  'AWS::SES::ConfigurationSet': 'ses:{region}:{account}:configuration-set/{id}',
  'AWS::SES::EmailIdentity': 'ses:{region}:{account}:identity/{id}',
};

/** The property holding each type's physical name (what `Ref` returns for most of them). */
const NAME_PROPERTY: Record<string, string> = {
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::StepFunctions::StateMachine': 'StateMachineName',
  'AWS::Events::EventBus': 'Name',
  'AWS::Events::Rule': 'Name',
  'AWS::SQS::Queue': 'QueueName',
  'AWS::SNS::Topic': 'TopicName',
  'AWS::S3::Bucket': 'BucketName',
  'AWS::IAM::Role': 'RoleName',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::SES::ConfigurationSet': 'Name',
  'AWS::SES::EmailIdentity': 'EmailIdentity',
};

/** Types whose `Ref` is the ARN rather than the name. */
const REF_IS_ARN = new Set(['AWS::StepFunctions::StateMachine', 'AWS::SNS::Topic', 'AWS::IAM::ManagedPolicy']);

/**
 * The logical id inside a placeholder ARN made by `resolveTokens`
 * (`arn:aws:lambda:us-east-1:123456789012:function:StepFnA1B2` → `StepFnA1B2`).
 */
export function arnToLogicalId(arn: string): string {
  const parts = arn.split(':');
  if (parts.length < 6 || parts[0] !== 'arn') throw new DefinitionError('arn', arn, 'not an ARN');
  const segments = parts.slice(5).join(':').split(/[:/]/);
  // `<type>/<id>`, `<type>:<id>[:qualifier]`, or a bare `<id>` (SQS, SNS, S3).
  const id = segments.length > 1 ? segments[1] : segments[0];
  if (!id) throw new DefinitionError('arn', arn, 'no resource id in the ARN');
  return id;
}

type Path = string;

/**
 * Replace every intrinsic in `value` (`Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Sub`, `Fn::Select`,
 * `Fn::Split`, `Fn::ImportValue`, `Fn::FindInMap`, `Fn::If` with its conditions, `Fn::GetAZs`,
 * `Fn::Base64`) by a local value. Unknown intrinsics, attributes and references throw a
 * `DefinitionError` naming the path inside the value.
 *
 * @example
 * resolveTokens({ 'Fn::GetAtt': ['StepFn1', 'Arn'] }, template)
 * // 'arn:aws:lambda:us-east-1:123456789012:function:StepFn1'
 */
export function resolveTokens<T = unknown>(value: unknown, template: CfnTemplate, ctx: TokenContext = {}): T {
  const stackName = ctx.stackName ?? 'Stack';
  const region = ctx.region ?? LOCAL_REGION;
  const account = ctx.accountId ?? LOCAL_ACCOUNT;
  const resources = template.Resources ?? {};
  const fail = (path: Path, detail: string): never => {
    throw new DefinitionError(`template ${stackName}`, path || '(root)', detail);
  };

  const pseudo: Record<string, unknown> = {
    'AWS::Region': region,
    'AWS::AccountId': account,
    'AWS::Partition': 'aws',
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': stackName,
    'AWS::StackId': `arn:aws:cloudformation:${region}:${account}:stack/${stackName}/00000000-0000-0000-0000-000000000000`,
    'AWS::NotificationARNs': [],
    'AWS::NoValue': NO_VALUE,
  };

  function resource(id: string, path: Path): CfnResource {
    return resources[id] ?? fail(path, `unknown resource "${id}"`);
  }

  function arnOf(id: string, res: CfnResource): string {
    const [, service = 'unknown', type = 'resource'] = res.Type.split('::');
    const shape = ARN_SHAPES[res.Type] ?? `${service.toLowerCase()}:{region}:{account}:${type.toLowerCase()}/{id}`;
    return `arn:aws:${shape.replace('{region}', region).replace('{account}', account).replace('{id}', id)}`;
  }

  function nameOf(id: string, res: CfnResource, path: Path): string {
    if (res.Type === 'AWS::DynamoDB::Table' || res.Type === 'AWS::DynamoDB::GlobalTable') return localTableName(id, res);
    const prop = NAME_PROPERTY[res.Type];
    const name = prop === undefined ? undefined : res.Properties?.[prop];
    return name === undefined ? id : String(resolve(name, `${path}<${id}.${prop}>`));
  }

  function ref(name: string, path: Path): unknown {
    if (name in pseudo) return pseudo[name];
    const param = template.Parameters?.[name];
    if (param) return param.Default ?? fail(path, `parameter "${name}" has no Default`);
    const res = resource(name, path);
    if (REF_IS_ARN.has(res.Type)) return arnOf(name, res);
    if (res.Type === 'AWS::SQS::Queue') return `https://sqs.${region}.amazonaws.com/${account}/${nameOf(name, res, path)}`;
    return nameOf(name, res, path);
  }

  function getAtt(id: string, attribute: string, path: Path): unknown {
    const res = resource(id, path);
    if (attribute === 'Arn' || attribute === `${res.Type.split('::')[2]}Arn`) return arnOf(id, res);
    if (attribute === 'StreamArn') return `${arnOf(id, res)}/stream/1970-01-01T00:00:00.000`;
    if (attribute === 'Name' || attribute === `${res.Type.split('::')[2]}Name`) return nameOf(id, res, path);
    if (attribute === 'QueueUrl') return ref(id, path);
    if (attribute === 'DomainName') return `${nameOf(id, res, path)}.s3.amazonaws.com`;
    if (attribute === 'RegionalDomainName') return `${nameOf(id, res, path)}.s3.${region}.amazonaws.com`;
    if (attribute === 'RoleId' || attribute === 'KeyId') return id;
    return fail(path, `unsupported attribute Fn::GetAtt ${id}.${attribute} (${res.Type})`);
  }

  function sub(text: string, vars: Record<string, unknown>, path: Path): string {
    return text.replace(/\$\{([^}]+)\}/g, (_, expr: string) => {
      if (expr.startsWith('!')) return `\${${expr.slice(1)}}`;
      if (expr in vars) return String(resolve(vars[expr], `${path}.${expr}`));
      const dot = expr.indexOf('.');
      if (dot > 0 && !expr.startsWith('AWS::')) return String(getAtt(expr.slice(0, dot), expr.slice(dot + 1), path));
      return String(ref(expr, path));
    });
  }

  function condition(name: string, path: Path): boolean {
    const def = template.Conditions?.[name] ?? fail(path, `unknown condition "${name}"`);
    return Boolean(resolve(def, `Conditions.${name}`));
  }

  function intrinsic(fn: string, arg: any, path: Path): unknown {
    const p = `${path}.${fn}`;
    switch (fn) {
      case 'Ref':
        return ref(arg, p);
      case 'Condition':
        return condition(arg, p);
      case 'Fn::GetAtt': {
        const [id, attribute] = typeof arg === 'string' ? [arg.slice(0, arg.indexOf('.')), arg.slice(arg.indexOf('.') + 1)] : arg;
        return getAtt(id, resolve(attribute, p) as string, p);
      }
      case 'Fn::Join': {
        const [sep, list] = arg;
        return (resolve(list, p) as unknown[]).map(String).join(sep);
      }
      case 'Fn::Sub':
        return typeof arg === 'string' ? sub(arg, {}, p) : sub(arg[0], arg[1] ?? {}, p);
      case 'Fn::Select': {
        const [index, list] = resolve(arg, p) as [number | string, unknown[]];
        const item = list[Number(index)];
        return item === undefined ? fail(p, `index ${index} out of range (${list.length} items)`) : item;
      }
      case 'Fn::Split': {
        const [sep, text] = resolve(arg, p) as [string, string];
        return text.split(sep);
      }
      case 'Fn::ImportValue':
        return importValue(resolve(arg, p) as string, p);
      case 'Fn::FindInMap': {
        const [map, top, second] = resolve(arg, p) as string[];
        const found = template.Mappings?.[map!]?.[top!]?.[second!];
        return found === undefined ? fail(p, `no mapping ${map}.${top}.${second}`) : found;
      }
      case 'Fn::If': {
        const [name, whenTrue, whenFalse] = arg;
        return condition(name, p) ? resolve(whenTrue, `${p}[1]`) : resolve(whenFalse, `${p}[2]`);
      }
      case 'Fn::Equals': {
        const [a, b] = resolve(arg, p) as unknown[];
        return JSON.stringify(a) === JSON.stringify(b);
      }
      case 'Fn::Not':
        return !(resolve(arg, p) as boolean[])[0];
      case 'Fn::And':
        return (resolve(arg, p) as boolean[]).every(Boolean);
      case 'Fn::Or':
        return (resolve(arg, p) as boolean[]).some(Boolean);
      case 'Fn::GetAZs':
        return ['a', 'b', 'c'].map((z) => `${region}${z}`);
      case 'Fn::Base64':
        return Buffer.from(String(resolve(arg, p))).toString('base64');
      default:
        return fail(path, `unsupported intrinsic ${fn}`);
    }
  }

  function importValue(name: string, path: Path): unknown {
    for (const [otherStack, other] of Object.entries(ctx.templates ?? {})) {
      for (const output of Object.values(other.Outputs ?? {})) {
        if (output.Export && resolveTokens(output.Export.Name, other, { ...ctx, stackName: otherStack }) === name) {
          return resolveTokens(output.Value, other, { ...ctx, stackName: otherStack });
        }
      }
    }
    return fail(path, `no stack exports "${name}" (Fn::ImportValue)`);
  }

  function resolve(v: unknown, path: Path): unknown {
    if (Array.isArray(v)) return v.map((item, i) => resolve(item, `${path}[${i}]`)).filter((item) => item !== NO_VALUE);
    if (v === null || typeof v !== 'object') return v;
    const keys = Object.keys(v);
    // `{ Condition: name }` is a reference only inside condition functions; elsewhere it may be a plain property.
    if (keys.length === 1 && (keys[0] === 'Ref' || keys[0]!.startsWith('Fn::') || (keys[0] === 'Condition' && path.includes('Fn::'))))
      return intrinsic(keys[0]!, (v as Record<string, unknown>)[keys[0]!], path);
    const out: Record<string, unknown> = {};
    for (const key of keys) {
      const resolved = resolve((v as Record<string, unknown>)[key], path ? `${path}.${key}` : key);
      if (resolved !== NO_VALUE) out[key] = resolved;
    }
    return out;
  }

  const result = resolve(value, '');
  return (result === NO_VALUE ? undefined : result) as T;
}

/** The local name of a table resource (its name in DynamoDB Local): its `TableName` when it is a literal, else its logical id. */
export function localTableName(logicalId: string, resource: CfnResource): string {
  const name = resource.Properties?.TableName;
  return typeof name === 'string' ? name : logicalId;
}
