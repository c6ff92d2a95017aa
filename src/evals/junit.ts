/**
 * An eval report as JUnit XML (`stepwise eval --junit FILE`), the format CI systems read: one
 * `testsuite` per workflow, one `testcase` per eval case, a `failure` with each failed assertion.
 */
import type { EvalReport } from './runner.ts';
import type { EvalFailure } from './validator.ts';

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
// XML 1.0 allows no control characters but tab, newline and carriage return.
const xml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');

const failureText = (f: EvalFailure) =>
  `${f.index === null ? 'execution' : `step ${f.index + 1} (${f.step})`}: ${f.why}\n  expected: ${f.expected}\n  actual:   ${f.actual}`;

/** The report as a JUnit XML document. */
export function junitXml(report: EvalReport, workflow: string): string {
  const seconds = (ms: number | undefined) => ((ms ?? 0) / 1000).toFixed(3);
  const total = report.cases.reduce((sum, c) => sum + (c.durationMs ?? 0), 0);
  const model = report.run ? `${report.run.provider}${report.run.model ? ` ${report.run.model}` : ''}` : 'unknown';
  const cases = report.cases.map((c) => {
    const open = `    <testcase classname="${xml(`stepwise.eval.${workflow}`)}" name="${xml(c.id)}" time="${seconds(c.durationMs)}"`;
    if (c.passed) return `${open}/>`;
    const message = c.failures[0] ? c.failures[0].why : 'failed';
    return `${open}>\n      <failure message="${xml(message)}">${xml(c.failures.map(failureText).join('\n'))}</failure>\n    </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="stepwise eval" tests="${report.total}" failures="${report.failed}" time="${seconds(total)}">`,
    `  <testsuite name="${xml(workflow)}" tests="${report.total}" failures="${report.failed}" errors="0" skipped="0" time="${seconds(total)}">`,
    `    <properties><property name="model" value="${xml(model)}"/></properties>`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
