/**
 * Resolve CloudFormation intrinsics in a synthesized template to local placeholder values, so the
 * local runtime can read the deployed state machine definitions and Lambda environments without
 * an AWS account. Placeholder ARNs always end in the resource's logical id (`arnToLogicalId`
 * inverts them); names are the resource's physical-name property, or the logical id.
 */
import { DefinitionError } from '../../core/errors.ts';

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
export interface IntrinsicContext {
  /** `AWS::StackName`. @default 'Stack' */
  stackName?: string;
  /** `AWS::Region`. @default LOCAL_REGION */
  region?: string;
  /** `AWS::AccountId`. @default LOCAL_ACCOUNT */
  accountId?: string;
  /** Every template of the app by stack name, for `Fn::ImportValue` (cross-stack references). */
  templates?: Record<string, CfnTemplate>;
  /** Put before every table name: sessions sharing one DynamoDB Local each see their own tables. @default '' */
  tablePrefix?: string;
}

export const LOCAL_REGION = 'us-east-1';
export const LOCAL_ACCOUNT = '123456789012';

/** `Ref: AWS::NoValue` removes the property (or list element) that holds it. */
const NO_VALUE = Symbol('AWS::NoValue');

/** The UUID of every placeholder `AWS::StackId`. */
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * How each resource type's placeholder ARN is shaped (`{id}` is the logical id). Others:
 * `arn:aws:<service>:<region>:<account>:<type>/{id}`.
 */
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
 * The logical id inside a placeholder ARN made by `resolveIntrinsics`
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

/** One intrinsic function: its argument (unresolved) and the path of the intrinsic inside the value. */
type Intrinsic = (resolver: IntrinsicResolver, arg: any, path: Path) => unknown;

/** The intrinsics `resolveIntrinsics` knows, by key. */
const INTRINSICS: Record<string, Intrinsic> = {
  Ref: (r, name, p) => r.ref(name, p),
  Condition: (r, name, p) => r.condition(name, p),
  'Fn::GetAtt': (r, arg, p) => {
    const [id, attribute] =
      typeof arg === 'string' ? [arg.slice(0, arg.indexOf('.')), arg.slice(arg.indexOf('.') + 1)] : arg;
    return r.getAtt(id, r.resolve(attribute, p) as string, p);
  },
  'Fn::Join': (r, [sep, list], p) => (r.resolve(list, p) as unknown[]).map(String).join(sep),
  'Fn::Sub': (r, arg, p) => (typeof arg === 'string' ? r.sub(arg, {}, p) : r.sub(arg[0], arg[1] ?? {}, p)),
  'Fn::Select': (r, arg, p) => {
    const [index, list] = r.resolve(arg, p) as [number | string, unknown[]];
    const item = list[Number(index)];
    return item === undefined ? r.fail(p, `index ${index} out of range (${list.length} items)`) : item;
  },
  'Fn::Split': (r, arg, p) => {
    const [sep, text] = r.resolve(arg, p) as [string, string];
    return text.split(sep);
  },
  'Fn::ImportValue': (r, arg, p) => r.importValue(r.resolve(arg, p) as string, p),
  'Fn::FindInMap': (r, arg, p) => {
    const [map, top, second] = r.resolve(arg, p) as string[];
    const found = r.template.Mappings?.[map!]?.[top!]?.[second!];
    return found === undefined ? r.fail(p, `no mapping ${map}.${top}.${second}`) : found;
  },
  'Fn::If': (r, [name, whenTrue, whenFalse], p) =>
    r.condition(name, p) ? r.resolve(whenTrue, `${p}[1]`) : r.resolve(whenFalse, `${p}[2]`),
  'Fn::Equals': (r, arg, p) => {
    const [a, b] = r.resolve(arg, p) as unknown[];
    return JSON.stringify(a) === JSON.stringify(b);
  },
  'Fn::Not': (r, arg, p) => !(r.resolve(arg, p) as boolean[])[0],
  'Fn::And': (r, arg, p) => (r.resolve(arg, p) as boolean[]).every(Boolean),
  'Fn::Or': (r, arg, p) => (r.resolve(arg, p) as boolean[]).some(Boolean),
  'Fn::GetAZs': (r) => ['a', 'b', 'c'].map((z) => `${r.region}${z}`),
  'Fn::Base64': (r, arg, p) => Buffer.from(String(r.resolve(arg, p))).toString('base64'),
};

/** Resolves the intrinsics of one template, "deployed" where its context says. */
class IntrinsicResolver {
  private readonly stackName: string;
  readonly region: string;
  private readonly account: string;
  private readonly resources: Record<string, CfnResource>;
  private readonly pseudo: Record<string, unknown>;

  constructor(
    readonly template: CfnTemplate,
    private readonly ctx: IntrinsicContext,
  ) {
    this.stackName = ctx.stackName ?? 'Stack';
    this.region = ctx.region ?? LOCAL_REGION;
    this.account = ctx.accountId ?? LOCAL_ACCOUNT;
    this.resources = template.Resources ?? {};
    this.pseudo = {
      'AWS::Region': this.region,
      'AWS::AccountId': this.account,
      'AWS::Partition': 'aws',
      'AWS::URLSuffix': 'amazonaws.com',
      'AWS::StackName': this.stackName,
      'AWS::StackId': `arn:aws:cloudformation:${this.region}:${this.account}:stack/${this.stackName}/${NIL_UUID}`,
      'AWS::NotificationARNs': [],
      'AWS::NoValue': NO_VALUE,
    };
  }

  fail(path: Path, detail: string): never {
    throw new DefinitionError(`template ${this.stackName}`, path || '(root)', detail);
  }

  /** `v` with every intrinsic in it resolved; `NO_VALUE` for an `AWS::NoValue` reference. */
  resolve(v: unknown, path: Path): unknown {
    if (Array.isArray(v)) {
      return v.map((item, i) => this.resolve(item, `${path}[${i}]`)).filter((item) => item !== NO_VALUE);
    }
    if (v === null || typeof v !== 'object') return v;
    const keys = Object.keys(v);
    const [first] = keys;
    // `{ Condition: name }` is a reference only inside condition functions; elsewhere it may be a plain property.
    const isCondition = first === 'Condition' && path.includes('Fn::');
    if (keys.length === 1 && (first === 'Ref' || first!.startsWith('Fn::') || isCondition)) {
      return this.intrinsic(first!, (v as Record<string, unknown>)[first!], path);
    }
    const out: Record<string, unknown> = {};
    for (const key of keys) {
      const resolved = this.resolve((v as Record<string, unknown>)[key], path ? `${path}.${key}` : key);
      if (resolved !== NO_VALUE) out[key] = resolved;
    }
    return out;
  }

  private intrinsic(fn: string, arg: unknown, path: Path): unknown {
    const apply = Object.hasOwn(INTRINSICS, fn) ? INTRINSICS[fn] : undefined;
    return apply ? apply(this, arg, `${path}.${fn}`) : this.fail(path, `unsupported intrinsic ${fn}`);
  }

  ref(name: string, path: Path): unknown {
    if (name in this.pseudo) return this.pseudo[name];
    const param = this.template.Parameters?.[name];
    if (param) return param.Default ?? this.fail(path, `parameter "${name}" has no Default`);
    const res = this.resource(name, path);
    if (REF_IS_ARN.has(res.Type)) return this.arnOf(name, res);
    if (res.Type === 'AWS::SQS::Queue') {
      return `https://sqs.${this.region}.amazonaws.com/${this.account}/${this.nameOf(name, res, path)}`;
    }
    return this.nameOf(name, res, path);
  }

  getAtt(id: string, attribute: string, path: Path): unknown {
    const res = this.resource(id, path);
    const type = res.Type.split('::')[2];
    if (attribute === 'Arn' || attribute === `${type}Arn`) return this.arnOf(id, res);
    if (attribute === 'StreamArn') return `${this.arnOf(id, res)}/stream/1970-01-01T00:00:00.000`;
    if (attribute === 'Name' || attribute === `${type}Name`) return this.nameOf(id, res, path);
    if (attribute === 'QueueUrl') return this.ref(id, path);
    if (attribute === 'DomainName') return `${this.nameOf(id, res, path)}.s3.amazonaws.com`;
    if (attribute === 'RegionalDomainName') return `${this.nameOf(id, res, path)}.s3.${this.region}.amazonaws.com`;
    if (attribute === 'RoleId' || attribute === 'KeyId') return id;
    return this.fail(path, `unsupported attribute Fn::GetAtt ${id}.${attribute} (${res.Type})`);
  }

  sub(text: string, vars: Record<string, unknown>, path: Path): string {
    return text.replace(/\$\{([^}]+)\}/g, (_, expr: string) => {
      if (expr.startsWith('!')) return `\${${expr.slice(1)}}`;
      if (expr in vars) return String(this.resolve(vars[expr], `${path}.${expr}`));
      const dot = expr.indexOf('.');
      if (dot > 0 && !expr.startsWith('AWS::')) {
        return String(this.getAtt(expr.slice(0, dot), expr.slice(dot + 1), path));
      }
      return String(this.ref(expr, path));
    });
  }

  condition(name: string, path: Path): boolean {
    const def = this.template.Conditions?.[name] ?? this.fail(path, `unknown condition "${name}"`);
    return Boolean(this.resolve(def, `Conditions.${name}`));
  }

  /** The value another stack of the app exports under `name`. */
  importValue(name: string, path: Path): unknown {
    for (const [otherStack, other] of Object.entries(this.ctx.templates ?? {})) {
      const otherCtx = { ...this.ctx, stackName: otherStack };
      for (const output of Object.values(other.Outputs ?? {})) {
        const exported = output.Export && resolveIntrinsics(output.Export.Name, other, otherCtx) === name;
        if (exported) return resolveIntrinsics(output.Value, other, otherCtx);
      }
    }
    return this.fail(path, `no stack exports "${name}" (Fn::ImportValue)`);
  }

  private resource(id: string, path: Path): CfnResource {
    return this.resources[id] ?? this.fail(path, `unknown resource "${id}"`);
  }

  private arnOf(id: string, res: CfnResource): string {
    const [, service = 'unknown', type = 'resource'] = res.Type.split('::');
    const shape = ARN_SHAPES[res.Type] ?? `${service.toLowerCase()}:{region}:{account}:${type.toLowerCase()}/{id}`;
    return `arn:aws:${shape.replace('{region}', this.region).replace('{account}', this.account).replace('{id}', id)}`;
  }

  private nameOf(id: string, res: CfnResource, path: Path): string {
    if (res.Type === 'AWS::DynamoDB::Table' || res.Type === 'AWS::DynamoDB::GlobalTable')
      return localTableName(id, res, this.ctx.tablePrefix);
    const prop = NAME_PROPERTY[res.Type];
    const name = prop === undefined ? undefined : res.Properties?.[prop];
    return name === undefined ? id : String(this.resolve(name, `${path}<${id}.${prop}>`));
  }
}

/**
 * Replace every intrinsic in `value` (`Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Sub`, `Fn::Select`,
 * `Fn::Split`, `Fn::ImportValue`, `Fn::FindInMap`, `Fn::If` with its conditions, `Fn::GetAZs`,
 * `Fn::Base64`) by a local value. Unknown intrinsics, attributes and references throw a
 * `DefinitionError` naming the path inside the value.
 *
 * @example
 * resolveIntrinsics({ 'Fn::GetAtt': ['StepFn1', 'Arn'] }, template)
 * // 'arn:aws:lambda:us-east-1:123456789012:function:StepFn1'
 */
export function resolveIntrinsics<T = unknown>(value: unknown, template: CfnTemplate, ctx: IntrinsicContext = {}): T {
  const result = new IntrinsicResolver(template, ctx).resolve(value, '');
  return (result === NO_VALUE ? undefined : result) as T;
}

/**
 * The local name of a table resource (its name in DynamoDB Local): its `TableName` when it is a literal, else its
 * logical id; after the session's `prefix`.
 */
export function localTableName(logicalId: string, resource: CfnResource, prefix = ''): string {
  const name = resource.Properties?.TableName;
  return prefix + (typeof name === 'string' ? name : logicalId);
}
