// The example project's environments. example.com values are placeholders: `dev` runs with them,
// and any other environment refuses to synthesize until they (and its account) are real.
import { defineConfig } from 'stepwise/config';

/**
 * The model every environment pins: Claude Haiku 4.5 through its US cross-region inference profile
 * (Bedrock serves it on demand only through an inference profile; use the `eu.`/`apac.` profile in
 * those regions). Claude 3.5 Haiku, the manifests' default, is a legacy model past its end-of-life
 * date (19 June 2026, Bedrock model card). Pinned per environment so one can move first.
 */
const HAIKU_4_5 = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';

const MiB = 1024 * 1024;

/** The warranty inbox on `domain`: one address receives claims and sends the replies. */
const claimsInbox = (domain: string) => ({
  receivingDomain: domain,
  recipients: [`claims@${domain}`],
  mailFrom: `claims@${domain}`,
  maxEmailBytes: 10 * MiB,
});

/** The lead lifecycle books meetings and syncs every state change to the CRM at `crmHost`. */
const leads = (crmHost: string) => ({
  'lead-lifecycle': { agent: 'book-meeting', crmWebhookUrl: `https://${crmHost}/stepwise/lead-state` },
});

export default defineConfig({
  environments: {
    dev: {
      modelId: HAIKU_4_5,
      logLevel: 'DEBUG',
      logRetention: 14,
      executionDataInLogs: true,
      removalPolicy: 'destroy',
      alarms: { failedExecutionsThreshold: 5, evaluationPeriods: 1 },
      email: claimsInbox('dev.warranty.example.com'),
      lifecycles: leads('crm.dev.example.com'),
      tags: { project: 'stepwise', environment: 'dev' },
    },
    staging: {
      modelId: HAIKU_4_5,
      logRetention: 30,
      executionDataInLogs: true,
      removalPolicy: 'retain',
      alarms: { failedExecutionsThreshold: 3, evaluationPeriods: 1 },
      email: claimsInbox('staging.warranty.example.com'),
      lifecycles: leads('crm.staging.example.com'),
      tags: { project: 'stepwise', environment: 'staging' },
    },
    prod: {
      modelId: HAIKU_4_5,
      logRetention: 365,
      executionDataInLogs: false,
      removalPolicy: 'retain',
      terminationProtection: true,
      alarms: { failedExecutionsThreshold: 1, evaluationPeriods: 1, email: 'stepwise-alerts@example.com' },
      email: { ...claimsInbox('warranty.example.com'), requireAuthenticatedSender: true, accessLogs: true },
      lifecycles: leads('crm.example.com'),
      tags: { project: 'stepwise', environment: 'prod' },
    },
  },
});
