import { definitionReference } from '/work/wt-docs/lambdas/lib/workflow/reference.ts';
console.log(definitionReference());
