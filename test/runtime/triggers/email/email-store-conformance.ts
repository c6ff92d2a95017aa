/** The EmailStore conformance suite, run against every adapter. */
import { describe, expect, it } from 'vitest';
import type { EmailStore } from '../../../../src/runtime/triggers/email/store.ts';
import { EMAIL } from '../../tools/fixtures.ts';

export function emailStoreConformance(adapter: string, create: () => EmailStore): void {
  describe(`EmailStore conformance: ${adapter}`, () => {
    it('returns what was stored', async () => {
      const store = create();
      const email = { ...EMAIL, id: `${adapter}-roundtrip` };
      await store.put(email, 'The case reference is C-10001.');
      expect(await store.get(email.id)).toEqual({ email, body: 'The case reference is C-10001.' });
    });

    it('keeps the first body of an id', async () => {
      const store = create();
      const email = { ...EMAIL, id: `${adapter}-first` };
      await store.put(email, 'first');
      await store.put({ ...email, subject: 'other' }, 'second');
      expect(await store.get(email.id)).toEqual({ email, body: 'first' });
    });

    it('knows nothing of an unknown id', async () => {
      expect(await create().get(`${adapter}-unknown`)).toBeUndefined();
    });

    it('gives a Message-ID claim to its first delivery, for good', async () => {
      const store = create();
      const claim = `${adapter}-claim-${Date.now()}`;
      expect(await store.claimMessageId(claim, 'ses-1')).toBe('ses-1');
      expect(await store.claimMessageId(claim, 'ses-1')).toBe('ses-1');
      expect(await store.claimMessageId(claim, 'ses-2')).toBe('ses-1');
      expect(await store.claimMessageId(`${claim}-other`, 'ses-2')).toBe('ses-2');
    });

    it('gives a claim raced by concurrent deliveries to exactly one of them', async () => {
      const store = create();
      const claim = `${adapter}-race-${Date.now()}`;
      const holders = await Promise.all(
        ['ses-a', 'ses-b', 'ses-c', 'ses-d'].map((id) => store.claimMessageId(claim, id)),
      );
      expect(new Set(holders).size).toBe(1);
    });

    it('keeps the first sender of a thread; another sender of its Message-ID contests it', async () => {
      const store = create();
      const id = `<${adapter}-${Date.now()}@mail.example.org>`;
      expect(await store.thread(id)).toBeUndefined();
      await store.claimThread(id, 'maria@example.org', 'ses-1');
      await store.claimThread(id, 'maria@example.org', 'ses-1');
      expect(await store.thread(id)).toEqual({
        messageId: id,
        from: 'maria@example.org',
        emailId: 'ses-1',
        contested: false,
      });
      await store.claimThread(id, 'mallory@example.net', 'ses-2');
      expect(await store.thread(id)).toEqual({
        messageId: id,
        from: 'maria@example.org',
        emailId: 'ses-1',
        contested: true,
      });
    });

    it('stores a body near the ingress limit', async () => {
      const store = create();
      const email = { ...EMAIL, id: `${adapter}-long` };
      const body = 'é'.repeat(20_000);
      await store.put(email, body);
      expect((await store.get(email.id))?.body).toBe(body);
    });
  });
}
