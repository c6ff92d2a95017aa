/**
 * The help is for a user's project, which has none of this repository's example workflows: `stepwise --help` and
 * the help of every command and subcommand (its examples included), in a project `stepwise new` makes, name no
 * example of `statemachines/` (kebab-case, PascalCase as stack and state machine names have it, or camelCase). A
 * template may share an example's name: where the help names the template (`--template <name>`), it counts as no
 * example.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { pascalCase } from '../../src/cdk/names.ts';
import { projectFiles, templates, workflowFiles } from '../../src/cli/project-template.ts';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';
import { useTempDirs } from '../support/tmp.ts';

const tempDir = useTempDirs('stepwise-help-');

/** The repository's example workflows and lifecycles, each as the help could name it. */
const EXAMPLES = readdirSync(join(PACKAGE_ROOT, 'statemachines'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const forms = (name: string) => {
  const pascal = pascalCase(name);
  return [name, pascal, pascal[0]!.toLowerCase() + pascal.slice(1)];
};
const TEMPLATES = templates().map((t) => t.name);

/**
 * The examples `help` names. Mentions of a template are not: `--template <name>`, the quoted choices of
 * `--template` and the `Templates:` list of `stepwise new`.
 */
function examplesNamed(help: string): string[] {
  const either = TEMPLATES.join('|');
  const text = help
    .replace(/\nTemplates:\n(?: {2}.*\n)*/g, '\n')
    .replace(new RegExp(`(--template[ =]|")(${either})\\b`, 'g'), '$1<template>');
  return EXAMPLES.filter((name) =>
    forms(name).some((form) => new RegExp(`(?<![A-Za-z0-9])${form}(?![A-Za-z0-9])`).test(text)),
  );
}

/** A project as `stepwise new --template lifecycle` makes it, with the workflow `stepwise init` adds. */
function userProject(): string {
  const dir = tempDir();
  const files = {
    ...projectFiles({ template: 'lifecycle', name: 'my-agents' }),
    ...workflowFiles('support-desk', dir),
  };
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

describe('the help of every command', () => {
  let helps: Record<string, string>;
  beforeAll(() => {
    const dir = userProject();
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    const child = spawnSync(process.execPath, ['--import', tsx, join(import.meta.dirname, 'help-texts.ts')], {
      cwd: dir,
      env: { ...process.env, STEPWISE_PROJECT_ROOT: dir },
      encoding: 'utf8',
    });
    if (child.status !== 0) throw new Error(`help-texts.ts: exit ${child.status}\n${child.stderr}`);
    helps = JSON.parse(child.stdout) as Record<string, string>;
  }, 60_000);

  it('covers stepwise, every command and the subcommands of the project’s lifecycle', () => {
    expect(Object.keys(helps)).toEqual(
      expect.arrayContaining(['', 'run', 'eval', 'new', 'local status', 'lifecycle orders replay']),
    );
    expect(helps.run).toMatch(/\nExamples:\n/);
  });

  it('names no example workflow of this repository', () => {
    const named = Object.entries(helps).flatMap(([command, help]) =>
      examplesNamed(help).map((example) => `stepwise ${command}: ${example}`),
    );
    expect(named).toEqual([]);
  });

  it('finds an example in each of its forms, and tells it from a template of the same name (the check can fail)', () => {
    expect(EXAMPLES.length).toBeGreaterThan(0);
    for (const example of EXAMPLES) {
      const [, pascal, camel] = forms(example);
      expect(examplesNamed(`  $ stepwise run ${example} --input statemachines/${example}/samples`)).toContain(example);
      expect(examplesNamed(`execution:Stepwise-${pascal}-prod:0123`)).toContain(example);
      expect(examplesNamed(`const ${camel} = 1;`)).toContain(example);
    }
    for (const template of TEMPLATES.filter((t) => EXAMPLES.includes(t))) {
      expect(helps.new).toContain(`--template ${template}`);
      expect(examplesNamed(`  $ stepwise new my-project --template ${template}`)).toEqual([]);
      expect(examplesNamed(`  $ stepwise eval ${template}`)).toEqual([template]);
    }
    expect(examplesNamed('  $ stepwise graph support-desk')).toEqual([]);
  });
});
