/**
 * The forms of model id each provider accepts, so `stepwise validate` catches an id the provider
 * would refuse at run time (`gpt-4o-mini` given to Bedrock): every call would fail, every
 * execution would end in the fallback, and nothing else would say why.
 */

/** Cross-region inference profile ids (`us.anthropic...`) wrap a foundation model id. */
export const INFERENCE_PROFILE = /^(us|us-gov|eu|apac|jp|au|ca|global)\.(.+)$/;

/** `<vendor>.<model>[:<version>]`, e.g. `anthropic.claude-3-5-haiku-20241022-v1:0`, `amazon.nova-lite-v1:0`. */
const BEDROCK_MODEL = /^[a-z][a-z0-9-]*\.[a-z0-9][a-z0-9.-]*(:[a-z0-9]+){0,2}$/;
/** A foundation model, inference profile, provisioned, custom or imported model by ARN. */
const BEDROCK_ARN =
  /^arn:aws(-[a-z]+)*:bedrock:[a-z0-9-]*:\d{0,12}:(foundation-model|inference-profile|application-inference-profile|provisioned-model|custom-model|imported-model|custom-model-deployment)\/.+$/;

/** The providers whose ids are checked, with an example of each form for the message. */
export const MODEL_ID_FORMS = {
  bedrock: {
    label: 'a Bedrock model id or inference profile',
    examples: [
      'anthropic.claude-3-5-haiku-20241022-v1:0',
      'us.anthropic.claude-haiku-4-5-20251001-v1:0',
      'an inference profile ARN',
    ],
    matches: (id: string) => BEDROCK_ARN.test(id) || BEDROCK_MODEL.test(INFERENCE_PROFILE.exec(id)?.[2] ?? id),
  },
} as const;

export type ModelProviderName = keyof typeof MODEL_ID_FORMS;

/** Why `id` is not a model id of `provider`, or `undefined` when it has the provider's form. */
export function modelIdProblem(id: string, provider: ModelProviderName = 'bedrock'): string | undefined {
  const form = MODEL_ID_FORMS[provider];
  return form.matches(id) ? undefined : `"${id}" is not ${form.label} (e.g. ${form.examples.join(', ')})`;
}
