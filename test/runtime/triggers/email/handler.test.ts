import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ExecutionAlreadyExists, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../../src/core/errors.ts';
import { memoryEventLog } from '../../../../src/runtime/event-log.ts';
import { createHandler } from '../../../../src/runtime/triggers/email/handler.ts';
import { sfnStarter } from '../../../../src/runtime/triggers/email/starter.ts';
import { memoryEmailStore } from '../../../../src/runtime/triggers/email/store.ts';
import { sample, withHeaders } from './fixtures.ts';

const ENV = {
  EMAIL_BUCKET: 'inbound-mail',
  EMAILS_TABLE: 'Emails',
  EVENTS_TABLE: 'Events',
  STATE_MACHINE_ARN: 'arn:aws:states:us-east-1:123456789012:stateMachine:Stepwise-CaseDesk-dev-case-desk',
  MAIL_FROM: 'cases@desk.example.com',
  AWS_REGION: 'us-east-1',
};

/** The SES Lambda-action event for one message (fields SES sends that the handler ignores are left out). */
function sesEvent(
  messageId: string,
  verdicts: Partial<Record<'spam' | 'virus' | 'spf' | 'dkim' | 'dmarc', string>> = {},
) {
  const v = (k: keyof typeof verdicts) => ({ status: verdicts[k] ?? 'PASS' });
  return {
    Records: [
      {
        eventSource: 'aws:ses',
        eventVersion: '1.0',
        ses: {
          mail: {
            timestamp: '2026-11-21T09:14:03.000Z',
            source: 'nora.kent@example.org',
            messageId,
            destination: ['cases@desk.example.com'],
          },
          receipt: {
            timestamp: '2026-11-21T09:14:03.000Z',
            processingTimeMillis: 412,
            recipients: ['cases@desk.example.com'],
            spamVerdict: v('spam'),
            virusVerdict: v('virus'),
            spfVerdict: v('spf'),
            dkimVerdict: v('dkim'),
            dmarcVerdict: v('dmarc'),
            action: {
              type: 'Lambda',
              invocationType: 'Event',
              functionArn: 'arn:aws:lambda:us-east-1:123456789012:function:Ingress',
            },
          },
        },
      },
    ],
  };
}

const s3 = mockClient(S3Client);
const sfn = mockClient(SFNClient);
// The files of a worker share one module graph: the real clients come back for the next file.
afterAll(() => {
  s3.restore();
  sfn.restore();
});
afterEach(() => {
  s3.reset();
  sfn.reset();
});

function storedMail(key: string, raw: string) {
  // The one method of the SDK's streaming body the handler uses.
  const Body = { transformToByteArray: async () => new TextEncoder().encode(raw) };
  s3.on(GetObjectCommand, { Bucket: 'inbound-mail', Key: key }).resolves({ Body: Body as never });
}

function handlerWith(env: Record<string, string> = ENV) {
  const events = memoryEventLog();
  const emails = memoryEmailStore();
  const starter = sfnStarter(new SFNClient({ region: 'us-east-1' }), ENV.STATE_MACHINE_ARN);
  const handler = createHandler(env, {
    s3: new S3Client({ region: 'us-east-1' }),
    events,
    emails,
    starter,
    clock: () => new Date('2026-11-21T09:14:05Z'),
  });
  return { handler, events, emails };
}

describe('ingress handler', () => {
  it('reads the stored mail under the key prefix and starts the workflow named after the SES message id', async () => {
    storedMail('inbound/o3vrnil0e2ic28trm7dfhrc2v0clambda4nbp0g81', sample('valid'));
    sfn
      .on(StartExecutionCommand)
      .resolves({ executionArn: 'arn:...:email-o3vrnil0e2ic28trm7dfhrc2v0clambda4nbp0g81', startDate: new Date() });
    const { handler, emails } = handlerWith();

    expect(await handler(sesEvent('o3vrnil0e2ic28trm7dfhrc2v0clambda4nbp0g81'))).toEqual([
      { status: 'STARTED', executionName: 'email-o3vrnil0e2ic28trm7dfhrc2v0clambda4nbp0g81' },
    ]);
    const [call] = sfn.commandCalls(StartExecutionCommand);
    expect(call!.args[0].input).toMatchObject({
      stateMachineArn: ENV.STATE_MACHINE_ARN,
      name: 'email-o3vrnil0e2ic28trm7dfhrc2v0clambda4nbp0g81',
    });
    const input = JSON.parse(call!.args[0].input.input!);
    expect(input).toEqual({
      email: expect.objectContaining({
        id: 'o3vrnil0e2ic28trm7dfhrc2v0clambda4nbp0g81',
        from: 'nora.kent@example.org',
      }),
    });
    expect((await emails.get('o3vrnil0e2ic28trm7dfhrc2v0clambda4nbp0g81'))?.body).toContain(
      'from my case C-10001 is broken again',
    );
  });

  it('uses the verdicts of the SES event', async () => {
    storedMail('inbound/m1', sample('valid'));
    const { handler, events } = handlerWith();
    expect(await handler(sesEvent('m1', { dmarc: 'FAIL' }))).toEqual([
      { status: 'REJECTED', executionName: 'email-m1', reason: 'dmarc_fail', detail: 'dmarcVerdict: FAIL' },
    ]);
    expect(sfn.commandCalls(StartExecutionCommand)).toEqual([]);
    expect((await events.list('email-m1'))[0]).toMatchObject({ type: 'IngressRejected', reason: 'dmarc_fail' });
  });

  it('treats mail from a receiving address or MAIL_FROM as a loop', async () => {
    const fromUs = withHeaders(sample('valid'), {
      remove: ['From'],
      add: ['From: cases@desk.example.com'],
    });
    storedMail('inbound/m2', fromUs);
    const { handler } = handlerWith({ ...ENV, MAIL_FROM: 'noreply@desk.example.com' });
    expect(await handler(sesEvent('m2'))).toMatchObject([{ status: 'REJECTED', reason: 'own_address' }]);
  });

  it('applies the configured size limit and key prefix', async () => {
    storedMail('mail/m3', sample('valid'));
    const { handler } = handlerWith({ ...ENV, EMAIL_KEY_PREFIX: 'mail/', MAX_MESSAGE_BYTES: '1024' });
    expect(await handler(sesEvent('m3'))).toMatchObject([{ status: 'REJECTED', reason: 'too_large' }]);
  });

  it('reports a duplicate delivery when Step Functions refuses the name', async () => {
    storedMail('inbound/m4', sample('valid'));
    sfn
      .on(StartExecutionCommand)
      .rejects(new ExecutionAlreadyExists({ $metadata: {}, message: 'Execution Already Exists' }));
    const { handler } = handlerWith();
    expect(await handler(sesEvent('m4'))).toEqual([{ status: 'DUPLICATE', executionName: 'email-m4' }]);
  });

  it('refuses an event that is not an SES receipt', async () => {
    const { handler } = handlerWith();
    await expect(handler({ Records: [{ eventSource: 'aws:s3' }] })).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('can be created without configuration and says what is missing when invoked', async () => {
    const handler = createHandler({});
    await expect(handler(sesEvent('m5'))).rejects.toThrow(/ingress environment: EMAIL_BUCKET/);
  });
});
