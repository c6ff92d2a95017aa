// Your environments: `cdk deploy -c env=NAME` selects one. `dev` runs locally as it is; any other
// environment refuses to synthesize while it has a placeholder value (example.com) or no account.
import { defineConfig } from 'stepwise/config';

export default defineConfig({
  environments: {
    dev: {
      logLevel: 'DEBUG',
      logRetention: 14,
      executionDataInLogs: true,
      removalPolicy: 'destroy',
      alarms: { failedExecutionsThreshold: 5, evaluationPeriods: 1 },
      // {{#email}}
      // SES inbound: mail to these addresses (on a domain whose MX points at SES) starts the {{email}} workflow.
      email: {
        receivingDomain: 'support.example.com',
        recipients: ['help@support.example.com'],
        mailFrom: 'help@support.example.com',
        maxEmailBytes: 10485760,
      },
      // {{/email}}
    },
    prod: {
      // account: '123456789012',
      // region: 'eu-west-1',
      alarms: { failedExecutionsThreshold: 1, evaluationPeriods: 1, email: 'oncall@example.com' },
      terminationProtection: true,
      // {{#email}}
      email: {
        receivingDomain: 'support.example.com',
        recipients: ['help@support.example.com'],
        mailFrom: 'help@support.example.com',
        maxEmailBytes: 10485760,
        requireAuthenticatedSender: true,
      },
      // {{/email}}
    },
  },
});
