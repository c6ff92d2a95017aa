/**
 * The ports the tools run against. Each has an AWS adapter and, where the local setup differs,
 * a local one: the registry as a JSON file, sent mail into an outbox. Tickets and idempotency
 * records use DynamoDB in both (DynamoDB Local on a laptop).
 */
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';

/** One row of the warranty registry (`registry.json` is an array of these). */
export interface RegistryEntry {
  serial: string;
  product: string;
  /** Last day of cover, `YYYY-MM-DD`. */
  warrantyEnd: string;
}

export interface WarrantyRegistry {
  /** The entry for a normalised (trimmed, upper-case) serial number, if registered. */
  lookup(serial: string): Promise<RegistryEntry | undefined>;
}

export interface Ticket {
  id: string;
  serialNumber: string;
  product?: string;
  issueSummary: string;
  priority: 'low' | 'normal' | 'high';
  /** The verified sender the ticket is for (personal data). */
  customer: string;
  emailId: string;
  execution: string;
  step: string;
  createdAt: string;
}

export interface TicketStore {
  /**
   * Create the ticket. When this execution's step already created it, return the stored one
   * unchanged; when the id belongs to another execution's or step's ticket, throw TicketConflictError.
   */
  create(ticket: Ticket): Promise<Ticket>;
}

/** A reply as the mailer sends it. `to` always comes from the verified ingress record. */
export interface OutgoingMail {
  to: string;
  subject: string;
  body: string;
  /** Message-ID of the mail being answered; omitted when it had none. */
  inReplyTo?: string;
  execution: string;
  step: string;
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<{ messageId: string }>;
}

export interface ToolPorts {
  registry: WarrantyRegistry;
  tickets: TicketStore;
  mailer: Mailer;
  /** Where side-effecting calls remember their result (Powertools idempotency persistence layer). */
  idempotency: BasePersistenceLayer;
}
