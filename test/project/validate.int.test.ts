/**
 * Every bad definition is one line naming the file and the field, from `validate`, `graph` and
 * `synth` alike, before anything runs. Each case breaks one file of the warranty workflow in a
 * throwaway copy of the project.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyBuiltProject } from '../support/built-package.ts';
import { stepwise } from '../support/project-copy.ts';
import { useTempDirs } from '../support/tmp.ts';

const tempDir = useTempDirs('stepwise-validate-');
const WF = 'statemachines/warranty-email';

interface BadCase {
  name: string;
  /**
   * The workflow or lifecycle checked. @default warranty-email, by validate, graph and synth; a lifecycle by validate
   * alone
   */
  target?: string;
  file: string;
  edit: (text: string) => string;
  /** The one line, after `stepwise: `. */
  message: RegExp;
}

const replace = (from: string | RegExp, to: string) => (text: string) => {
  const out = text.replace(from, to);
  if (out === text) throw new Error(`fixture edit did not apply: ${from}`);
  return out;
};

const CASES: BadCase[] = [
  {
    name: 'an unknown edge',
    file: `${WF}/steps/03b-device-not-found.md`,
    edit: replace('next: [DONE]', 'next: [05-nowhere]'),
    message: /^statemachines\/warranty-email\/steps\/03b-device-not-found\.md: next\.0: unknown step "05-nowhere"$/,
  },
  {
    name: 'an unreachable step',
    file: `${WF}/steps/09-orphan.md`,
    edit: () =>
      '---\nname: 09-orphan\ndescription: Nobody routes here.\nversion: 1.0.0\nkind: code\nhandler: out-of-scope\nnext: [DONE]\n---\nOrphan.\n',
    message:
      /^statemachines\/warranty-email\/steps\/09-orphan\.md: name: step "09-orphan" is unreachable from entry "01-extract-serial"$/,
  },
  {
    name: 'a duplicate eval scenario id',
    file: `${WF}/evals/zz_duplicate.yaml`,
    edit: () => readFileSync(join(CASE_SOURCE, `${WF}/evals/valid_warranty_001.yaml`), 'utf8'),
    message:
      /^statemachines\/warranty-email\/evals\/zz_duplicate\.yaml: scenario_id: duplicate "valid_warranty_001" \(also in .*valid_warranty_001\.yaml\)$/,
  },
  {
    name: 'bad YAML, with the line in the file itself',
    file: `${WF}/steps/03c-expired-warranty.md`,
    edit: replace(/^tools: .*$/m, 'tools: [send_email'),
    message: /^statemachines\/warranty-email\/steps\/03c-expired-warranty\.md: \(yaml\): line \d+, column \d+: .+$/,
  },
  {
    name: 'a tool the manifest does not declare',
    file: `${WF}/steps/03d-request-serial.md`,
    edit: replace(/^tools: \[send_email\]$/m, 'tools: [send_email, send_fax]'),
    message:
      /^statemachines\/warranty-email\/steps\/03d-request-serial\.md: tools\.1: unknown tool "send_fax" \(the manifest declares: check_warranty, create_ticket, send_email\)$/,
  },
  {
    name: 'a declared tool without a module',
    file: `${WF}/workflow.yaml`,
    edit: replace(
      'tools: [check_warranty, create_ticket, send_email]',
      'tools: [check_warranty, create_ticket, send_email, send_fax]',
    ),
    message:
      /^statemachines\/warranty-email\/workflow\.yaml: tools\.3: no module lambdas\/workflows\/warranty-email\/tools\/send-fax\.ts/,
  },
  {
    name: 'an unregistered code step handler',
    file: `${WF}/steps/02-check-warranty.md`,
    edit: replace('handler: check-warranty', 'handler: check-warrantee'),
    message:
      /^statemachines\/warranty-email\/steps\/02-check-warranty\.md: handler: no module lambdas\/workflows\/warranty-email\/steps\/check-warrantee\.ts/,
  },
  {
    name: 'an offline rule routing to an undeclared edge',
    file: `${WF}/offline-model.yaml`,
    edit: replace(/(03a-valid-warranty:\n(?:.*\n)*?\s+route:\n\s+next: )05-send-confirmation/, '$1DONE'),
    message:
      /^statemachines\/warranty-email\/offline-model\.yaml: steps\.03a-valid-warranty\.\d+\.route\.next: "DONE" is not a declared edge \(05-send-confirmation\)$/,
  },
  {
    name: 'an offline rule setting a bound tool argument',
    file: `${WF}/offline-model.yaml`,
    edit: replace(
      "            issueSummary: '{{data.issueSummary}}'",
      "            issueSummary: '{{data.issueSummary}}'\n            serialNumber: SN00001",
    ),
    message:
      /^statemachines\/warranty-email\/offline-model\.yaml: steps\.03a-valid-warranty\.\d+\.calls\.0\.args\.serialNumber: bound from data\.warranty\.serialNumber by the step/,
  },
  {
    name: 'a binding of an argument the tool does not have',
    file: `${WF}/steps/03a-valid-warranty.md`,
    edit: replace('    product: data.warranty.product', '    productName: data.warranty.product'),
    message:
      /^statemachines\/warranty-email\/steps\/03a-valid-warranty\.md: bind\.create_ticket\.productName: "productName" is not an argument of create_ticket/,
  },
  {
    name: 'an offline rule that reads an untrusted input field as input.<field> (it would never match)',
    file: `${WF}/offline-model.yaml`,
    edit: replace(
      '    - when: { found: serial, anyKeyword: [fault, warranty] }',
      '    - when: { text: input.email.subject, found: serial, anyKeyword: [fault, warranty] }',
    ),
    message:
      /^statemachines\/warranty-email\/offline-model\.yaml: steps\.01-extract-serial\.1\.when\.text: input\.email\.subject is never set: email is untrusted, so the step reads it as untrusted\.email\.subject$/,
  },
  {
    name: 'a model id that is no Bedrock model id',
    file: `${WF}/workflow.yaml`,
    edit: replace('  id: anthropic.claude-3-5-haiku-20241022-v1:0', '  id: gpt-4o-mini'),
    message:
      /^statemachines\/warranty-email\/workflow\.yaml: model\.id: "gpt-4o-mini" is not a Bedrock model id or inference profile \(e\.g\. /,
  },
  {
    name: 'a consensus rule voting, at temperature 0, for a value outside the choices',
    target: 'tool-loop',
    file: 'statemachines/tool-loop/offline-model.yaml',
    edit: replace(
      'reason: An arithmetic expression is asked for., fields: { selectedTool: calculate,',
      'reason: An arithmetic expression is asked for., fields: { selectedTool: calculator,',
    ),
    message:
      /^statemachines\/tool-loop\/offline-model\.yaml: steps\.02-select-tool\.\d+\.route\.fields\.selectedTool: "calculator" is not one of the consensus choices \(calculate, convert_units, current_time, save_note, lookup_note\): the vote would discard it$/,
  },
  ...(
    [
      [
        'workflow.yaml',
        `${WF}/workflow.yaml`,
        /^maxSteps:/m,
        'unknownField: 1\nmaxSteps:',
        'unknownField',
        'workflow.yaml',
      ],
      [
        'workflow.yaml, nested',
        `${WF}/workflow.yaml`,
        /^ {2}maxTokens:/m,
        '  temperatureCap: 1\n  maxTokens:',
        'model.temperatureCap',
        'workflow.yaml',
      ],
      [
        'a step',
        `${WF}/steps/03b-device-not-found.md`,
        /^next:/m,
        'timeoutSeconds: 3\nnext:',
        'timeoutSeconds',
        'step frontmatter',
      ],
      [
        'offline-model.yaml',
        `${WF}/offline-model.yaml`,
        /^steps:/m,
        'examples: []\nsteps:',
        'examples',
        'offline-model.yaml',
      ],
      [
        'an eval case',
        `${WF}/evals/valid_warranty_001.yaml`,
        /^category:/m,
        'tags: [smoke]\ncategory:',
        'tags',
        'eval case',
      ],
      ['guard rules', `${WF}/guards/reply.yaml`, /^checks:/m, 'severity: high\nchecks:', 'severity', 'guard rules'],
      [
        'statechart.yaml',
        'statemachines/lead-lifecycle/statechart.yaml',
        /^initial:/m,
        'history: deep\ninitial:',
        'history',
        'statechart.yaml',
      ],
      [
        'an agent config',
        'statemachines/lead-lifecycle/agents/book-meeting.json',
        '"description":',
        '"channel": "sms", "description":',
        'channel',
        'agent config',
      ],
    ] as const
  ).map(
    ([what, file, from, to, field, kind]): BadCase => ({
      name: `a field this version does not know, in ${what}`,
      ...(file.includes('lead-lifecycle') && { target: 'lead-lifecycle' }),
      file,
      edit: replace(from, to),
      message: new RegExp(
        `^${file.replaceAll('.', '\\.')}: ${field.replaceAll('.', '\\.')}: not a field of ${kind} in stepwise \\d+\\.\\d+\\.\\d+ \\(a newer Stepwise\\?\\)$`,
      ),
    }),
  ),
];

let CASE_SOURCE = '';

describe('bad definitions', () => {
  let dir: string;
  beforeAll(() => {
    dir = copyBuiltProject(tempDir());
    CASE_SOURCE = dir;
  });

  it.each(CASES)(
    '$name: one line naming the file and field, from validate, graph and synth',
    { timeout: 60_000 },
    async ({ target = 'warranty-email', file, edit, message }) => {
      const path = join(dir, file);
      let original: string | undefined;
      try {
        original = readFileSync(path, 'utf8');
      } catch {
        original = undefined;
      }
      writeFileSync(path, edit(original ?? ''));
      try {
        const lifecycle = target === 'lead-lifecycle';
        const results = await Promise.all([
          stepwise(dir, 'validate', target),
          ...(lifecycle ? [] : [stepwise(dir, 'graph', target), stepwise(dir, 'synth', target)]),
        ]);
        for (const { code, out, err } of results) {
          expect(code).toBe(1);
          expect(out).toBe('');
          expect(err).toMatch(/^stepwise: [^\n]+\n$/);
          expect(err.slice('stepwise: '.length).trimEnd()).toMatch(message);
        }
      } finally {
        if (original === undefined) rmSync(path);
        else writeFileSync(path, original);
      }
    },
  );

  it('the same errors are JSON objects on stdout with --json', { timeout: 60_000 }, async () => {
    const path = join(dir, `${WF}/steps/02-check-warranty.md`);
    const original = readFileSync(path, 'utf8');
    writeFileSync(path, original.replace('handler: check-warranty', 'handler: nope'));
    try {
      const { code, out } = await stepwise(dir, 'validate', 'warranty-email', '--json');
      expect(code).toBe(1);
      expect(JSON.parse(out)).toEqual({
        error: { type: 'DefinitionError', message: expect.stringMatching(/02-check-warranty\.md: handler: no module/) },
      });
    } finally {
      writeFileSync(path, original);
    }
  });
});
