import { DEFINITION_KINDS, definitionJsonSchema } from '/work/wt-docs/lambdas/lib/definition-schemas.ts';
for (const k of DEFINITION_KINDS) { const s = definitionJsonSchema(k); console.log(k.name, JSON.stringify(s).length); }
console.log(JSON.stringify(definitionJsonSchema(DEFINITION_KINDS[6]), null, 1).slice(0, 3000));
