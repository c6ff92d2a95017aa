/**
 * `stepwise/templates`: `{{placeholder}}` templates, rendered as the engine renders offline-model rules: a dotted
 * path into the scope (`{{data.serialNumber}}`), optionally piped through `upper`, `lower`, `json` or
 * `default: <text>`. A value under an `untrusted` path (text a stranger wrote) is rendered only when it is plain
 * words, so a sender's display name cannot put a link or an address into a reply. `lookup` reads one dotted path.
 *
 * @example
 * import { renderTemplate } from 'stepwise/templates';
 *
 * const { value, problems } = renderTemplate('Hello {{email.fromName | default: there}},', { email }, { untrusted: ['email'] });
 */
export { lookup, type RenderOptions, renderTemplate } from './core/template.ts';
