/**
 * Typed errors. Every failure Gatehouse reports carries a stable `code`; the HTTP layer maps the
 * code to a status and an RFC 9457 problem document. Code never matches on message strings.
 */
export type ErrorCode =
  | 'VALIDATION'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'VERSION_CONFLICT'
  | 'INVALID_CURSOR'
  | 'ITEM_TOO_LARGE'
  | 'TRANSACTION_TOO_LARGE'
  | 'RETRYABLE'
  | 'BATCH_INCOMPLETE'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'PRECONDITION_FAILED'
  | 'PRECONDITION_REQUIRED'
  | 'UNPROCESSABLE'
  | 'RATE_LIMITED'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'CONFIG'
  | 'INTERNAL';

export const statusOf: Record<ErrorCode, number> = {
  VALIDATION: 400,
  INVALID_CURSOR: 400,
  ITEM_TOO_LARGE: 413,
  TRANSACTION_TOO_LARGE: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  VERSION_CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE: 422,
  PRECONDITION_REQUIRED: 428,
  RATE_LIMITED: 429,
  CONFIG: 500,
  INTERNAL: 500,
  RETRYABLE: 503,
  BATCH_INCOMPLETE: 503,
};

export interface FieldError {
  field: string;
  message: string;
}

export interface ErrorDetails {
  /** The offending field(s), for validation and uniqueness errors. */
  errors?: FieldError[];
  /** Any extra, non-secret facts a client can act on (e.g. `assignments: 3`). */
  [extra: string]: unknown;
}

export class GatehouseError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GatehouseError';
    this.code = code;
    this.details = details;
  }
  get status(): number {
    return statusOf[this.code];
  }
}

export const isGatehouseError = (e: unknown, code?: ErrorCode): e is GatehouseError =>
  e instanceof GatehouseError && (code === undefined || e.code === code);

// Constructors for the common cases, so call sites read as what happened.
export const validation = (field: string, message: string) =>
  new GatehouseError('VALIDATION', `${field}: ${message}`, { errors: [{ field, message }] });
export const notFound = (what: string, id?: string) =>
  new GatehouseError('NOT_FOUND', id ? `${what} ${id} not found` : `${what} not found`, { entity: what, ...(id ? { id } : {}) });
export const conflict = (field: string, message: string, extra: ErrorDetails = {}) =>
  new GatehouseError('CONFLICT', message, { errors: [{ field, message }], ...extra });
export const versionConflict = (what: string, expected?: number) =>
  new GatehouseError('VERSION_CONFLICT', `${what} was changed by someone else${expected !== undefined ? ` (expected version ${expected})` : ''}; re-read it and retry`, { entity: what });
export const forbidden = (message = 'You are not allowed to do this') => new GatehouseError('FORBIDDEN', message);
