/**
 * Every bad definition is one line naming the file and the field, from `validate`, `graph` and
 * `synth` alike, before anything runs. Each case breaks one file of the fixture project's email workflow
 * (a consensus workflow, a lifecycle) in a throwaway copy of it.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFixtureProject } from '../support/fixture-project.ts';
import { stepwise } from '../support/project-copy.ts';
import { useTempDirs } from '../support/tmp.ts';

const tempDir = useTempDirs('stepwise-validate-');
const WF = 'statemachines/case-desk';
const LIFECYCLE = 'member-journey';

interface BadCase {
  name: string;
  /**
   * The workflow or lifecycle checked. @default case-desk, by validate, graph and synth; a lifecycle by validate
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
    file: `${WF}/steps/03b-not-found.md`,
    edit: replace('next: [DONE]', 'next: [05-nowhere]'),
    message: /^statemachines\/case-desk\/steps\/03b-not-found\.md: next\.0: unknown step "05-nowhere"$/,
  },
  {
    name: 'an unreachable step',
    file: `${WF}/steps/09-orphan.md`,
    edit: () =>
      '---\nname: 09-orphan\ndescription: Nobody routes here.\nversion: 1.0.0\nkind: code\nhandler: hand-off\nnext: [DONE]\n---\nOrphan.\n',
    message:
      /^statemachines\/case-desk\/steps\/09-orphan\.md: name: step "09-orphan" is unreachable from entry "01-read-request"$/,
  },
  {
    name: 'a duplicate eval scenario id',
    file: `${WF}/evals/zz_duplicate.yaml`,
    edit: () => readFileSync(join(CASE_SOURCE, `${WF}/evals/valid_case_001.yaml`), 'utf8'),
    message:
      /^statemachines\/case-desk\/evals\/zz_duplicate\.yaml: scenario_id: duplicate "valid_case_001" \(also in .*valid_case_001\.yaml\)$/,
  },
  {
    name: 'bad YAML, with the line in the file itself',
    file: `${WF}/steps/03c-ask-ref.md`,
    edit: replace(/^tools: .*$/m, 'tools: [send_email'),
    message: /^statemachines\/case-desk\/steps\/03c-ask-ref\.md: \(yaml\): line \d+, column \d+: .+$/,
  },
  {
    name: 'a tool the manifest does not declare',
    file: `${WF}/steps/05-confirm.md`,
    edit: replace(/^tools: \[send_email\]$/m, 'tools: [send_email, send_fax]'),
    message:
      /^statemachines\/case-desk\/steps\/05-confirm\.md: tools\.1: unknown tool "send_fax" \(the manifest declares: lookup_case, open_case, send_email\)$/,
  },
  {
    name: 'a declared tool without a module',
    file: `${WF}/workflow.yaml`,
    edit: replace(
      'tools: [lookup_case, open_case, send_email]',
      'tools: [lookup_case, open_case, send_email, send_fax]',
    ),
    message:
      /^statemachines\/case-desk\/workflow\.yaml: tools\.3: no module lambdas\/workflows\/case-desk\/tools\/send-fax\.ts/,
  },
  {
    name: 'an unregistered code step handler',
    file: `${WF}/steps/02-look-up.md`,
    edit: replace('handler: look-up', 'handler: lookup'),
    message:
      /^statemachines\/case-desk\/steps\/02-look-up\.md: handler: no module lambdas\/workflows\/case-desk\/steps\/lookup\.ts/,
  },
  {
    name: 'an offline rule routing to an undeclared edge',
    file: `${WF}/offline-model.yaml`,
    edit: replace(/(03a-open-case:\n(?:.*\n)*?\s+route:\n\s+next: )05-confirm/, '$1DONE'),
    message:
      /^statemachines\/case-desk\/offline-model\.yaml: steps\.03a-open-case\.\d+\.route\.next: "DONE" is not a declared edge \(05-confirm\)$/,
  },
  {
    name: 'an offline rule setting a bound tool argument',
    file: `${WF}/offline-model.yaml`,
    edit: replace(
      "args: { summary: '{{data.summary}}', priority: normal }",
      "args: { summary: '{{data.summary}}', priority: normal, caseRef: C-00001 }",
    ),
    message:
      /^statemachines\/case-desk\/offline-model\.yaml: steps\.03a-open-case\.\d+\.calls\.0\.args\.caseRef: bound from data\.record\.ref by the step/,
  },
  {
    name: 'a binding of an argument the tool does not have',
    file: `${WF}/steps/03a-open-case.md`,
    edit: replace('    product: data.record.product', '    productName: data.record.product'),
    message:
      /^statemachines\/case-desk\/steps\/03a-open-case\.md: bind\.open_case\.productName: "productName" is not an argument of open_case/,
  },
  {
    name: 'an offline rule that reads an untrusted input field as input.<field> (it would never match)',
    file: `${WF}/offline-model.yaml`,
    edit: replace(
      '    - when: { found: ref, anyKeyword: [issue] }',
      '    - when: { text: input.email.subject, found: ref, anyKeyword: [issue] }',
    ),
    message:
      /^statemachines\/case-desk\/offline-model\.yaml: steps\.01-read-request\.1\.when\.text: input\.email\.subject is never set: email is untrusted, so the step reads it as untrusted\.email\.subject$/,
  },
  {
    name: 'a model id that is no Bedrock model id',
    file: `${WF}/workflow.yaml`,
    edit: replace('  id: anthropic.claude-3-5-haiku-20241022-v1:0', '  id: gpt-4o-mini'),
    message:
      /^statemachines\/case-desk\/workflow\.yaml: model\.id: "gpt-4o-mini" is not a Bedrock model id or inference profile \(e\.g\. /,
  },
  {
    name: 'a consensus rule voting, at temperature 0, for a value outside the choices',
    target: 'consensus-pick',
    file: 'statemachines/consensus-pick/offline-model.yaml',
    edit: replace(
      'reason: A sum is asked for., fields: { pickedTool: add_numbers,',
      'reason: A sum is asked for., fields: { pickedTool: add_number,',
    ),
    message:
      /^statemachines\/consensus-pick\/offline-model\.yaml: steps\.02-pick\.\d+\.route\.fields\.pickedTool: "add_number" is not one of the consensus choices \(add_numbers, change_case\): the vote would discard it$/,
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
        `${WF}/steps/03b-not-found.md`,
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
        `${WF}/evals/valid_case_001.yaml`,
        /^category:/m,
        'tags: [smoke]\ncategory:',
        'tags',
        'eval case',
      ],
      ['guard rules', `${WF}/guards/reply.yaml`, /^checks:/m, 'severity: high\nchecks:', 'severity', 'guard rules'],
      [
        'statechart.yaml',
        'statemachines/member-journey/statechart.yaml',
        /^initial:/m,
        'history: deep\ninitial:',
        'history',
        'statechart.yaml',
      ],
      [
        'an agent config',
        'statemachines/member-journey/agents/attend-call.json',
        '"description":',
        '"channel": "sms", "description":',
        'channel',
        'agent config',
      ],
    ] as const
  ).map(
    ([what, file, from, to, field, kind]): BadCase => ({
      name: `a field this version does not know, in ${what}`,
      ...(file.includes(LIFECYCLE) && { target: LIFECYCLE }),
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
    dir = copyFixtureProject(tempDir(), { built: true });
    CASE_SOURCE = dir;
  });

  it.each(CASES)(
    '$name: one line naming the file and field, from validate, graph and synth',
    { timeout: 60_000 },
    async ({ target = 'case-desk', file, edit, message }) => {
      const path = join(dir, file);
      let original: string | undefined;
      try {
        original = readFileSync(path, 'utf8');
      } catch {
        original = undefined;
      }
      writeFileSync(path, edit(original ?? ''));
      try {
        const lifecycle = target === LIFECYCLE;
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
    const path = join(dir, `${WF}/steps/02-look-up.md`);
    const original = readFileSync(path, 'utf8');
    writeFileSync(path, original.replace('handler: look-up', 'handler: nope'));
    try {
      const { code, out } = await stepwise(dir, 'validate', 'case-desk', '--json');
      expect(code).toBe(1);
      expect(JSON.parse(out)).toEqual({
        error: { type: 'DefinitionError', message: expect.stringMatching(/02-look-up\.md: handler: no module/) },
      });
    } finally {
      writeFileSync(path, original);
    }
  });
});
