/** The guard's definition format and its checks, on their own. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadGuardRules } from '../../../src/definitions/workflow/guard.ts';
import type { StepDefinition, WorkflowDefinition } from '../../../src/definitions/workflow/schema.ts';
import { checkText } from '../../../src/runtime/steps/guard.ts';
import { normalizeForChecks, responseFacts } from '../../../src/runtime/steps/response-facts.ts';

function workflowWith(
  rules: string,
  guard: StepDefinition['guard'] = { rules: 'guards/r.yaml', onViolation: 'regenerate', maxRegenerations: 1 },
) {
  const dir = mkdtempSync(join(tmpdir(), 'guard-'));
  mkdirSync(join(dir, 'guards'));
  writeFileSync(join(dir, 'guards', 'r.yaml'), rules);
  const step = {
    name: 's1',
    kind: 'llm',
    tools: ['send_email'],
    file: 'steps/s1.md',
    instruction: '# Role\nYou write replies.',
    guard,
  } as unknown as StepDefinition;
  return { def: { dir } as WorkflowDefinition, step };
}

describe('guard rules files', () => {
  it('refuses a bad regular expression, a bad CEL expression, a duplicate id, with the file and field', () => {
    const fallback = 'fallback: Hello.\ndescription: x\n';
    const load = (checks: string) => {
      const { def, step } = workflowWith(`${fallback}checks:\n${checks}`);
      return () => loadGuardRules(def, step);
    };
    expect(load("  - { id: a, type: deny, patterns: ['(unclosed'] }")).toThrow(
      /r\.yaml: checks\.0: bad regular expression/,
    );
    expect(load("  - { id: a, type: expression, expression: 'size(links) ==' }")).toThrow(
      /r\.yaml: checks\.0\.expression: /,
    );
    expect(load('  - { id: a, type: links }\n  - { id: a, type: phones }')).toThrow(
      /r\.yaml: checks\.1\.id: duplicate check id "a"/,
    );
    expect(load("  - { id: a, type: granted, pattern: 'X-\\d+', from: [ticketId] }")).toThrow(
      /checks\.0\.from\.0: data\.<field> or input\.<field>/,
    );
  });

  it('refuses a guard on a code step, a guarded tool off the allow-list, a missing file', () => {
    const { def, step } = workflowWith('description: x\nfallback: Hi.\nchecks: [{ id: a, type: links }]\n');
    expect(() => loadGuardRules(def, { ...step, kind: 'code' })).toThrow(
      /steps\/s1\.md: guard: only LLM steps are guarded/,
    );
    expect(() => loadGuardRules(def, { ...step, guard: { ...step.guard!, tools: ['create_ticket'] } })).toThrow(
      /guard\.tools\.0: "create_ticket" is not one of the step's tools/,
    );
    expect(() => loadGuardRules(def, { ...step, guard: { ...step.guard!, rules: 'guards/none.yaml' } })).toThrow(
      /guard\.rules: no file/,
    );
  });
});

describe('response facts', () => {
  it('finds link hosts (with or without a scheme), email addresses, phone numbers and amounts; not dates, serials or ticket ids', () => {
    const facts = responseFacts(
      'Visit https://www.Evil.example/path?x=1 or fast-repairs.com, mail help@evil.example, call +1 (800) 555-0100 or 020 7946 0958. ' +
        'Refund $75.50 or 20 EUR. Cover ended 2024-03-12; serial SN1234567; ticket TKT-7K2M9QXA4HPD.',
    );
    expect(facts).toEqual({
      links: ['evil.example', 'fast-repairs.com'],
      emails: ['help@evil.example'],
      phones: ['+18005550100', '02079460958'],
      amounts: [75.5, 20],
      max_amount: 75.5,
    });
  });

  it('finds links whose host is an IPv4 or IPv6 literal or an internationalized domain, as the URL standard writes the host', () => {
    expect(
      responseFacts(
        'Claim at http://192.168.1.10/claim, https://[2001:db8::1]:8443/x, http://3232235777/ or 203.0.113.7/login',
      ).links,
    ).toEqual(['192.168.1.10', '[2001:db8::1]', '192.168.1.1', '203.0.113.7']);
    // Punycode: a homoglyph (a Cyrillic о in "suppоrt") is another host than the allow-listed one.
    expect(responseFacts('See https://bücher.example/x, гарантия.рф, suppоrt.example.com or evil。com').links).toEqual([
      'xn--bcher-kva.example',
      'xn--80aahwyqq9h.xn--p1ai',
      'xn--supprt-zqf.example.com',
      'evil.com',
    ]);
  });

  it('finds amounts with the currency code or symbol before or after the number, in any digits and separators', () => {
    expect(
      responseFacts('Refund EUR 500, 500$, 1.500,00 €, USD1,250.50, £20, ¥3000, 75 CHF, ٥٠٠ EUR, 20 euros').amounts,
    ).toEqual([500, 500, 1500, 1250.5, 20, 3000, 75, 500, 20]);
    // Not money: version numbers, counts, serials, dates, ticket ids, and codes that are also words.
    expect(
      responseFacts('Version 2.5, 3 devices, 14 days, SN100001, 2027-01-15, TKT-7K2M9QXA4HPD, ALL 3 units, TOP 5.')
        .amounts,
    ).toEqual([]);
    // Random ticket ids that hold a currency code and digits (HRK is the kuna's, EUR the euro's).
    expect(responseFacts('Your tickets TKT-HRK039RS0Y9J, TKT-EUR123456 and TKT-X9USD12Q are open.').amounts).toEqual(
      [],
    );
  });

  it('reads the text NFKC-normalised, without invisible characters, with every dash a hyphen and every digit ASCII', () => {
    expect(normalizeForChecks('ＴＫＴ－ＡＢ１２ TKT‐CD34 T\u200bKT—EF56 billing＠evil.example ٣٤ \u202ewoc.live')).toBe(
      'TKT-AB12 TKT-CD34 TKT-EF56 billing@evil.example 34 woc.live',
    );
    expect(
      responseFacts('Mail billing＠evil.example or call +٤٤ ٢٠ ٧٩٤٦ ٠٩٥٨ or ０２０ ７９４６ ０９５８.'),
    ).toMatchObject({
      emails: ['billing@evil.example'],
      phones: ['+442079460958', '02079460958'],
    });
  });

  it('finds phone numbers in international and national forms, whatever groups and separators they are written in', () => {
    expect(
      responseFacts('Call +81-3-1234-5678, +33 1 23 45 67 89, 020/7946/0958, +44 (0) 20 7946 0958 or tel:+15550100123.')
        .phones,
    ).toEqual(['+81312345678', '+33123456789', '02079460958', '+4402079460958', '+15550100123']);
  });

  it('checks a ticket id written with a Unicode hyphen or fullwidth letters like any other', () => {
    const rules = {
      checks: [{ id: 'ids', type: 'granted' as const, pattern: '\\bTKT-[A-Z0-9]{4,}\\b', from: ['data.ticketId'] }],
    };
    const ctx = {
      step: { instruction: '', tools: [] },
      internalNames: [],
      scope: { data: { ticketId: 'TKT-7K2M9QXA' }, input: {} },
      args: {},
    };
    expect(
      checkText('Ticket TKT‐FAKE1234, ＴＫＴ－ＦＡＫＥ５６７８ and TKT-\u200bFAKE9999.', rules, ctx)[0],
    ).toMatchObject({ passed: false, found: ['TKT-FAKE1234', 'TKT-FAKE5678', 'TKT-FAKE9999'] });
    expect(checkText('Your ticket is TKT‑7K2M9QXA.', rules, ctx)[0]).toMatchObject({ passed: true });
  });

  it('an expression check reads the facts, the arguments and the state', () => {
    const rules = {
      checks: [
        { id: 'small', type: 'expression' as const, expression: 'max_amount <= data.limit && args.body.size() < 200' },
      ],
    };
    const ctx = {
      step: { instruction: '', tools: [] },
      internalNames: [],
      scope: { data: { limit: 50 }, input: {} },
      args: { body: 'x' },
    };
    expect(checkText('We refund $40.', rules, { ...ctx, args: { body: 'We refund $40.' } })).toEqual([
      { check: 'small', lane: 'deterministic', passed: true },
    ]);
    expect(checkText('We refund $60.', rules, { ...ctx, args: { body: 'We refund $60.' } })[0]).toMatchObject({
      passed: false,
      found: ['max_amount <= data.limit && args.body.size() < 200'],
    });
  });
});

describe('forms a reply could hide a fact in', () => {
  it('finds a bare domain whose top-level domain is special-use (.example, .test, .onion, .local, .internal)', () => {
    expect(responseFacts('Go to evil.example, evil.test, shop.onion, nas.local or wiki.internal.').links).toEqual([
      'evil.example',
      'evil.test',
      'shop.onion',
      'nas.local',
      'wiki.internal',
    ]);
  });

  it('finds an address written with [at] and [dot], in brackets, parentheses or braces, any case', () => {
    expect(
      responseFacts('Write to billing [at] evil [dot] example, Help(AT)evil(DOT)com or x { at } y.example.').emails,
    ).toEqual(['billing@evil.example', 'help@evil.com', 'x@y.example']);
  });

  it('finds a North American number written in letters, as the digits of a keypad', () => {
    expect(responseFacts('Call 1-800-FLOWERS, 800-GO-FEDEX or 1 (800) CALL-NOW.').phones).toEqual([
      '18003569377',
      '8004633339',
      '18002255669',
    ]);
  });

  it('finds money written in words before a currency word or code', () => {
    expect(
      responseFacts(
        'We refund five hundred dollars, a thousand euros, twenty-five bucks, one hundred and fifty pounds or Two Million USD.',
      ).amounts,
    ).toEqual([500, 1000, 25, 150, 2_000_000]);
  });

  it('finds nothing in an ordinary reply: abbreviations, file and product names, counts, capitals, serials', () => {
    expect(
      responseFacts(
        'Hello Ms. Lopez, thank you for your email. E.g. the Node.js app, i.e. the U.S. store, opens at 9 a.m.; ' +
          'see config.json. We will call you within five business days; one of the two devices (serial SN770012, ' +
          'model 123-ABCDEFG) is covered until 2027-01-15. Room 212 RECEPTION has a few dollars of parts. ' +
          'Your ticket is TKT-7K2M9QXA (open at the desk).',
      ),
    ).toEqual({ links: [], emails: [], phones: [], amounts: [], max_amount: 0 });
  });

  it('checks a ticket id written in lower case like any other: a forged one is refused, the granted one passes', () => {
    const rules = {
      checks: [{ id: 'ids', type: 'granted' as const, pattern: '\\bTKT-[A-Z0-9]{4,}\\b', from: ['data.ticketId'] }],
    };
    const ctx = {
      step: { instruction: '', tools: [] },
      internalNames: [],
      scope: { data: { ticketId: 'TKT-7K2M9QXA' }, input: {} },
      args: {},
    };
    expect(checkText('Your ticket is tkt-abcd1234.', rules, ctx)[0]).toMatchObject({
      passed: false,
      found: ['tkt-abcd1234'],
    });
    expect(checkText('Your ticket is tkt-7k2m9qxa.', rules, ctx)[0]).toMatchObject({ passed: true });
  });
});
