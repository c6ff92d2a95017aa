import { memoryEmailStore } from '../../../../src/runtime/triggers/email/store.ts';
import { emailStoreConformance } from './email-store-conformance.ts';

emailStoreConformance('memory', memoryEmailStore);
