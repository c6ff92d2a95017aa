import { memoryEmailStore } from '../../../lambdas/email/store.ts';
import { emailStoreConformance } from './email-store-conformance.ts';

emailStoreConformance('memory', memoryEmailStore);
