import { memorySessionStore } from '../../../lambdas/workflows/turn-pipeline/session.ts';
import { sessionStoreConformance } from './session-store-conformance.ts';

sessionStoreConformance('memory', (leaseMs) => memorySessionStore(leaseMs));
