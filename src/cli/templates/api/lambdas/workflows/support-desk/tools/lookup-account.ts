import { defineTool } from 'stepwise';
import * as z from 'zod';

/** A stand-in account directory: replace it with your system (declare its table or API in `resources`). */
const ACCOUNTS: Record<string, { plan: string; balance: string }> = {
  C1001: { plan: 'Pro', balance: '12.50 EUR' },
  C1002: { plan: 'Free', balance: '0.00 EUR' },
};

/** Looks an account up. No side effect and no AWS resource: nothing to grant, nothing to make idempotent. */
export default defineTool({
  name: 'lookup_account',
  description: 'Look a customer account up by id. Returns the plan and the balance, or found: false.',
  input: z.strictObject({
    customerId: z
      .string()
      .regex(/^C[0-9]{3,8}$/)
      .describe('The customer id, e.g. C1001.'),
  }),
  async run({ customerId }) {
    const account = ACCOUNTS[customerId];
    return account ? { customerId, ...account } : { customerId, found: false };
  },
});
