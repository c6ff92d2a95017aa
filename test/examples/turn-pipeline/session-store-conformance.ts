/** One suite for every SessionStore adapter (memory, DynamoDB): the lease, the versioned commit, release. */
import { describe, expect, it } from 'vitest';
import {
  SessionBusyError,
  SessionConflictError,
  type SessionStore,
} from '../../../lambdas/workflows/turn-pipeline/session.ts';
import { failure } from '../../support/failure.ts';

const T0 = new Date('2026-03-01T10:00:00Z');
const later = (ms: number) => new Date(T0.getTime() + ms);

export function sessionStoreConformance(name: string, make: (leaseMs: number) => SessionStore): void {
  describe(`SessionStore conformance: ${name}`, () => {
    let n = 0;
    const id = () => `conf-${name}-${Date.now()}-${n++}`;

    it('begins a new session at version 0 and commits it as version 1, which the next turn reads', async () => {
      const store = make(60_000);
      const sid = id();
      const s = await store.begin(sid, 'exec-1', T0);
      expect(s).toMatchObject({ sessionId: sid, version: 0, turn: 0, activeScenario: null });
      const saved = await store.commit(
        {
          ...s,
          turn: 1,
          activeScenario: 'refund',
          activeStep: 'identify_order',
          ruleFires: { r1: { count: 1, lastTurn: 1 } },
        },
        'exec-1',
      );
      expect(saved.version).toBe(1);
      expect(await store.begin(sid, 'exec-2', T0)).toMatchObject({
        version: 1,
        turn: 1,
        activeScenario: 'refund',
        ruleFires: { r1: { count: 1, lastTurn: 1 } },
      });
    });

    it('rejects a concurrent turn of the same session with SessionBusyError, and lets it in after the commit', async () => {
      const store = make(60_000);
      const sid = id();
      const s = await store.begin(sid, 'exec-1', T0);
      const busy = await failure(store.begin(sid, 'exec-2', later(1000)));
      expect(busy).toBeInstanceOf(SessionBusyError);
      expect(busy.message).toMatch(/busy: turn exec-1 is still running/);
      await store.commit({ ...s, turn: 1 }, 'exec-1');
      expect((await store.begin(sid, 'exec-2', later(2000))).turn).toBe(1);
    });

    it('a retried begin of the same turn keeps its lease; release lets the next turn in', async () => {
      const store = make(60_000);
      const sid = id();
      await store.begin(sid, 'exec-1', T0);
      await store.begin(sid, 'exec-1', later(10));
      await store.release(sid, 'exec-2'); // not the holder: no effect
      expect(await failure(store.begin(sid, 'exec-2', later(20)))).toBeInstanceOf(SessionBusyError);
      await store.release(sid, 'exec-1');
      expect((await store.begin(sid, 'exec-2', later(30))).version).toBe(0);
    });

    it('an expired lease is taken over, and the abandoned turn can no longer commit', async () => {
      const store = make(1000);
      const sid = id();
      const stale = await store.begin(sid, 'exec-1', T0);
      const fresh = await store.begin(sid, 'exec-2', later(5000));
      expect(await failure(store.commit({ ...stale, turn: 1 }, 'exec-1'))).toBeInstanceOf(SessionConflictError);
      expect((await store.commit({ ...fresh, turn: 1 }, 'exec-2')).version).toBe(1);
    });
  });
}
