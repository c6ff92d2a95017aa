// The example project's environments. example.com values are placeholders: `dev` runs with them,
// and any other environment refuses to synthesize until they (and its account) are real.
import { defineConfig } from 'stepwise/cdk';

/**
 * The model every environment pins: Claude Haiku 4.5 through its US cross-region inference profile
 * (Bedrock serves it on demand only through an inference profile; use the `eu.`/`apac.` profile in
 * those regions). Claude 3.5 Haiku, the manifests' default, is a legacy model past its end-of-life
 * date (19 June 2026, Bedrock model card). Pinned per environment so one can move first.
 */
const HAIKU_4_5 = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';

const MiB = 1024 * 1024;

export default defineConfig({
  environments: {
    dev: {
      modelId: HAIKU_4_5,
      logLevel: 'DEBUG',
      logRetention: 14,
      executionDataInLogs: true,
      removalPolicy: 'destroy',
      alarms: { failedExecutionsThreshold: 5, evaluationPeriods: 1 },
      email: {
        receivingDomain: 'dev.warranty.example.com',
        recipients: ['claims@dev.warranty.example.com'],
        mailFrom: 'claims@dev.warranty.example.com',
        maxEmailBytes: 10 * MiB,
      },
      lifecycles: { 'lead-lifecycle': { agent: 'book-meeting', crmWebhookUrl: 'https://crm.dev.example.com/stepwise/lead-state' } },
      tags: { project: 'stepwise', environment: 'dev' },
    },
    staging: {
      modelId: HAIKU_4_5,
      logRetention: 30,
      executionDataInLogs: true,
      removalPolicy: 'retain',
      alarms: { failedExecutionsThreshold: 3, evaluationPeriods: 1 },
      email: {
        receivingDomain: 'staging.warranty.example.com',
        recipients: ['claims@staging.warranty.example.com'],
        mailFrom: 'claims@staging.warranty.example.com',
        maxEmailBytes: 10 * MiB,
      },
      lifecycles: { 'lead-lifecycle': { agent: 'book-meeting', crmWebhookUrl: 'https://crm.staging.example.com/stepwise/lead-state' } },
      tags: { project: 'stepwise', environment: 'staging' },
    },
    prod: {
      modelId: HAIKU_4_5,
      logRetention: 365,
      executionDataInLogs: false,
      removalPolicy: 'retain',
      terminationProtection: true,
      alarms: { failedExecutionsThreshold: 1, evaluationPeriods: 1, email: 'stepwise-alerts@example.com' },
      email: {
        receivingDomain: 'warranty.example.com',
        recipients: ['claims@warranty.example.com'],
        mailFrom: 'claims@warranty.example.com',
        maxEmailBytes: 10 * MiB,
        requireAuthenticatedSender: true,
        accessLogs: true,
      },
      lifecycles: { 'lead-lifecycle': { agent: 'book-meeting', crmWebhookUrl: 'https://crm.example.com/stepwise/lead-state' } },
      tags: { project: 'stepwise', environment: 'prod' },
    },
  },
});
