import { defineCodeStep, NO_USAGE, StepFailedError } from 'stepwise';

/** Replacement stock by product: replace with your inventory. */
const STOCK: Record<string, number> = { 'MUG-4': 12, 'PLATE-2': 0 };

/** One order line (an item of 05-check-lines): whether a replacement is in stock; an unknown product fails the item. */
export default defineCodeStep(async ({ step, input }) => {
  const { sku, quantity } = input.previous.data.line as { sku: string; quantity: number };
  const stock = STOCK[sku];
  if (stock === undefined) throw new StepFailedError(`unknown product ${sku}`);
  return {
    next: step.next[0]!,
    reason: `${sku}: ${stock} in stock`,
    decidedBy: 'code',
    fields: { sku, replaceable: stock >= quantity },
    toolCalls: [],
    usage: NO_USAGE,
  };
});
