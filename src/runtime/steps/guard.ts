/**
 * The output guard: a step option (`guard:` in the frontmatter) that checks the text an LLM step
 * is about to send (a guarded tool's string arguments) against the deterministic checks of a rules
 * file, before the tool runs. The recipient of a reply is pinned elsewhere; this pins its content:
 * links, email addresses and phone numbers only from allow-lists, no echo of the step instruction,
 * no id the workflow did not grant (a ticket id no tool returned), no denied phrase, and any CEL
 * expression the rules declare.
 *
 * A violating call is refused (it never reaches the tool) and the model is told what was wrong, so
 * it regenerates; after `maxRegenerations` refusals the rules file's fallback template is sent
 * instead. Every call's verdicts are kept on its record (`guard`), and so reach the event log.
 */

import { StepwiseError } from '../../core/errors.ts';
import { compileExpression } from '../../core/expressions.ts';
import { lookup, renderTemplate } from '../../core/template.ts';
import type { GuardCheck, GuardRules } from '../../definitions/workflow/guard.ts';
import type { StepDefinition } from '../../definitions/workflow/schema.ts';
import type { GuardVerdict, ToolCallRecord } from '../contracts/step.ts';
import { refusedArgs } from '../tools/refusals.ts';
import type { Toolbox } from '../tools/types.ts';
import { linkHost, normalizeForChecks, phoneDigits, responseFacts } from './response-facts.ts';
import type { BindingScope } from './step-toolbox.ts';

/** A guarded call broke a rule; the message names the checks. Recorded on the refused call, never thrown. */
export class GuardViolationError extends StepwiseError {}

/** What a check needs besides the text. */
export interface GuardContext {
  step: Pick<StepDefinition, 'instruction' | 'tools'>;
  /** Names that betray the machinery when they appear in customer-facing text (step and tool names). */
  internalNames: readonly string[];
  scope: BindingScope;
  args: Record<string, unknown>;
  /**
   * The input the trigger marks untrusted, as the step read it (an email with its body); undefined when the step does
   * not read it.
   */
  untrusted?: Record<string, unknown>;
}

const words = (text: string): string[] =>
  normalizeForChecks(text)
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? [];

function ngrams(list: string[], n: number): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + n <= list.length; i++) out.add(list.slice(i, i + n).join(' '));
  return out;
}

/** The instruction without the sections the text may legitimately echo (e.g. the reply's own outline). */
function leakableInstruction(instruction: string, ignore: readonly string[]): string {
  const skip = new Set(ignore.map((s) => s.trim().toLowerCase()));
  let keep = true;
  return instruction
    .split('\n')
    .filter((line) => {
      const heading = /^#{1,6}\s+(.*)$/.exec(line);
      if (heading) keep = !skip.has(heading[1]!.trim().toLowerCase());
      return keep;
    })
    .join('\n');
}

const STATE_PATH = /\b(?:data|input|untrusted)\.[A-Za-z_][\w.]*/g;

function instructionLeaks(
  text: string,
  check: Extract<GuardCheck, { type: 'instructions' }>,
  ctx: GuardContext,
): string[] {
  const found: string[] = [];
  const source = ngrams(words(leakableInstruction(ctx.step.instruction, check.ignoreSections)), check.minWords);
  const echoed = [...ngrams(words(text), check.minWords)].find((g) => source.has(g));
  if (echoed) found.push(`"${echoed}"`);
  const lower = text.toLowerCase();
  for (const name of ctx.internalNames)
    if (new RegExp(`(?<![\\w-])${name.replace(/[-]/g, '\\-')}(?![\\w-])`, 'i').test(lower)) found.push(name);
  found.push(...(text.match(STATE_PATH) ?? []));
  return found;
}

/** Every string inside a value: what could reach the outside, or be quoted. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

/** Every run of `n` characters of `text`. */
function windows(text: string, n: number): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + n <= text.length; i++) out.add(text.slice(i, i + n));
  return out;
}

/** What the reply may repeat although the untrusted input has it too. */
export interface OwnText {
  /** Our own texts the reply follows (the step instruction, the fallback): a run they contain is not a copy of the sender. */
  texts: readonly string[];
  /** Values from trusted state (a product name from the registry): cut out of both sides, so no run reaches across one. */
  values: readonly string[];
}

/**
 * The runs of `text` copied from `source`: `minWords` words in a row, or `minChars` characters in
 * a row, compared as lower-case words joined by single spaces (so case, punctuation, spacing and
 * Unicode look-alikes do not hide a copy). Each source string is read on its own, so a run never
 * spans two fields; what `own` covers is no copy (see `OwnText`). At most three runs.
 */
export function quotedRuns(
  text: string,
  source: readonly string[],
  own: OwnText,
  minWords: number,
  minChars: number,
): string[] {
  const canonical = (t: string) => words(t).join(' ');
  // Values of one word ("valid") are not cut: the sender could sprinkle them to break up a copy.
  const values = own.values.map(canonical).filter((v) => v.includes(' '));
  const segments = (t: string) =>
    values
      .reduce((parts, v) => parts.flatMap((p) => ` ${p} `.split(` ${v} `)), [canonical(t)])
      .map((p) => p.trim())
      .filter(Boolean);
  const ours = own.texts.map(canonical);
  const mine = segments(text);
  const byWords = new Set(mine.flatMap((m) => [...ngrams(m.split(' '), minWords)]));
  const byChars = new Set(mine.flatMap((m) => [...windows(m, minChars)]));
  const runs = new Set<string>();
  for (const segment of source.flatMap(segments)) {
    const shared = [...ngrams(segment.split(' '), minWords)].filter((r) => byWords.has(r));
    shared.push(...[...windows(segment, minChars)].filter((r) => byChars.has(r)));
    for (const run of shared) if (!ours.some((t) => t.includes(run.trim()))) runs.add(run.trim());
    if (runs.size >= 3) break;
  }
  return [...runs].slice(0, 3).map((r) => `"${r}"`);
}

function onAllowList(kind: 'links' | 'emails' | 'phones', value: string, allow: readonly string[]): boolean {
  if (kind === 'phones') return allow.some((a) => phoneDigits(a) === value);
  if (kind === 'emails') return allow.some((a) => a.toLowerCase() === value);
  // A link host is allowed when it is an allowed domain or one of its subdomains.
  return allow.map(linkHost).some((a) => value === a || value.endsWith(`.${a}`));
}

const DEFAULT_MESSAGES: Record<GuardCheck['type'], string> = {
  links: 'links that are not allowed',
  emails: 'email addresses that are not allowed',
  phones: 'phone numbers that are not allowed',
  instructions: 'text of the internal instructions or internal names',
  granted: 'ids that were never granted to this customer',
  deny: 'phrases that must not be sent',
  expression: 'a statement the rules forbid',
  quotes: 'text copied from the message we are answering (write it in your own words)',
};

/**
 * Run every check of `rules` on `text`, as `normalizeForChecks` reads it (so `＠`, `TKT‐1` with a
 * Unicode hyphen or a zero-width space hide nothing). Pure.
 * @example
 * checkText('Call +1 555 0100 999', rules, ctx) // [{ check: 'phones-allow-listed', passed: false, found: ['+15550100999'] }, ...]
 */
export function checkText(
  written: string,
  rules: Pick<GuardRules, 'checks'> & Partial<Pick<GuardRules, 'fallback'>>,
  ctx: GuardContext,
): GuardVerdict[] {
  const text = normalizeForChecks(written);
  const facts = responseFacts(text);
  return rules.checks.map((check): GuardVerdict => {
    let found: string[];
    switch (check.type) {
      case 'links':
      case 'emails':
      case 'phones':
        found = facts[check.type].filter((v) => !onAllowList(check.type, v, check.allow));
        break;
      case 'instructions':
        found = instructionLeaks(text, check, ctx);
        break;
      case 'granted': {
        // Matched in any case: a reader takes `tkt-ab12` for `TKT-AB12`, so it is the granted id or a forged one.
        const granted = new Set(
          check.from
            .map((p) => lookup(ctx.scope, p))
            .filter((v) => v !== undefined && v !== null)
            .map((v) => String(v).toLowerCase()),
        );
        found = [...new Set(text.match(new RegExp(check.pattern, 'giu')) ?? [])].filter(
          (id) => !granted.has(id.toLowerCase()),
        );
        break;
      }
      case 'deny':
        found = check.patterns.flatMap((p) => text.match(new RegExp(p, 'iu'))?.[0] ?? []);
        break;
      case 'quotes': {
        const paths = (list: readonly string[]) => list.flatMap((p) => strings(lookup(ctx.scope, p)));
        const own = { texts: [ctx.step.instruction, rules.fallback ?? ''], values: paths(check.trusted) };
        found = quotedRuns(
          text,
          [...strings(ctx.untrusted), ...paths(check.from)],
          own,
          check.minWords,
          check.minChars,
        );
        break;
      }
      case 'expression': {
        const outcome = compileExpression(check.expression).test({
          text,
          ...facts,
          args: ctx.args,
          data: ctx.scope.data,
          input: ctx.scope.input,
        });
        found =
          'value' in outcome ? (outcome.value ? [] : [check.expression]) : [`${check.expression} (${outcome.problem})`];
        break;
      }
    }
    const verdict: GuardVerdict = { check: check.id, lane: 'deterministic', passed: found.length === 0 };
    return found.length ? { ...verdict, found, message: check.message ?? DEFAULT_MESSAGES[check.type] } : verdict;
  });
}

/** The guard's settings for one step run. */
export interface GuardSetup {
  step: Pick<StepDefinition, 'name' | 'instruction' | 'tools' | 'guard'>;
  rules: GuardRules;
  internalNames: readonly string[];
  scope: BindingScope;
  /** The untrusted input the step read (see `GuardContext.untrusted`). */
  untrusted?: Record<string, unknown>;
}

/**
 * The step's toolbox with the guard in front of the guarded tools (one instance per step run: it
 * counts the refusals). A clean call runs with its verdicts on the record; a violating one is
 * refused with the violations in its error (the model reads them and rewrites), or, once the
 * regenerations are used up (or with `onViolation: fallback`), the fallback template is sent in
 * its place.
 */
export function withGuard(toolbox: Toolbox, setup: GuardSetup): Toolbox {
  const option = setup.step.guard!;
  const guarded = new Set(option.tools ?? setup.step.tools.filter((t) => toolbox.spec(t)?.replyArg !== undefined));
  const allowedRefusals = option.onViolation === 'fallback' ? 0 : option.maxRegenerations;
  let refusals = 0;
  return {
    spec: (name) => toolbox.spec(name),
    async execute(name, args, callCtx): Promise<ToolCallRecord> {
      // A call the tool's schema refuses never runs anyway: the toolbox's refusal (ToolInputError) says more.
      if (!guarded.has(name) || !toolbox.spec(name)?.input.safeParse(args).success)
        return toolbox.execute(name, args, callCtx);
      const given =
        args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
      const ctx: GuardContext = {
        step: setup.step,
        internalNames: setup.internalNames,
        scope: setup.scope,
        args: given,
        untrusted: setup.untrusted,
      };
      const verdicts = checkText(strings(given).join('\n'), setup.rules, ctx);
      const failed = verdicts.filter((v) => !v.passed);
      if (failed.length === 0) return { ...(await toolbox.execute(name, args, callCtx)), guard: verdicts };
      const summary = failed.map((v) => `${v.check}: ${v.message} (${v.found!.join(', ')})`).join('; ');
      const replyArg = toolbox.spec(name)?.replyArg;
      if (refusals < allowedRefusals || replyArg === undefined) {
        refusals++;
        const fix =
          replyArg === undefined
            ? 'This call cannot be sent.'
            : `Write the ${replyArg} again without them; the rest of your instructions still hold.`;
        return {
          tool: name,
          args: refusedArgs(args),
          error: `${GuardViolationError.name}: not sent, it contains ${summary}. ${fix}`,
          guard: verdicts,
        };
      }
      // Out of regenerations: the templated fallback goes out instead, its text from trusted state only.
      const fallback = renderTemplate(setup.rules.fallback, setup.scope).value as string;
      const sent = await toolbox.execute(
        name,
        { ...Object.fromEntries(Object.entries(given).filter(([, v]) => typeof v !== 'string')), [replyArg]: fallback },
        callCtx,
      );
      return {
        ...sent,
        guard: [
          ...verdicts,
          {
            check: 'fallback',
            lane: 'deterministic',
            passed: true,
            message: `fallback template sent instead (${summary})`,
          },
        ],
      };
    },
  };
}
