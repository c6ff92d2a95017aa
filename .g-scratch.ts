import { App, Stack } from 'aws-cdk-lib';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import * as lambda from 'aws-cdk-lib/aws-lambda';
const app = new App(); const stack = new Stack(app, 'S');
const fn = new lambda.Function(stack, 'F', { runtime: lambda.Runtime.NODEJS_22_X, handler: 'x', code: lambda.Code.fromInline('x') });
const t = new tasks.LambdaInvoke(stack, 'T', { lambdaFunction: fn, payloadResponseOnly: true, payload: sfn.TaskInput.fromObject({ route: null, r2: { declaredIn: null, event: 'x' }, 'e.$': '$.a' }) });
console.log(JSON.stringify(t.toStateJson()));
