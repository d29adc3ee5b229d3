/** Audit export formats: JSON Lines (one record per line) and CSV (RFC 4180, spreadsheet-safe). */
import type { AuditRecord } from './service.ts';

export type ExportFormat = 'jsonl' | 'csv';

export const CSV_COLUMNS = [
  'at', 'id', 'tenantId', 'actorId', 'actorType', 'action', 'entityType', 'entityId', 'status', 'severity',
  'requestId', 'ip', 'userAgent', 'before', 'after',
] as const;

export const contentTypeOf = (f: ExportFormat) => (f === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson');

export const toJsonLine = (r: AuditRecord) => `${JSON.stringify(r)}\n`;

function cell(v: unknown): string {
  if (v === undefined || v === null) return '';
  let s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  // A cell a spreadsheet would evaluate as a formula (CSV injection) is neutralised.
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

export const toCsvHeader = () => `${CSV_COLUMNS.join(',')}\r\n`;
export const toCsvRow = (r: AuditRecord) => `${CSV_COLUMNS.map((c) => cell(r[c])).join(',')}\r\n`;
