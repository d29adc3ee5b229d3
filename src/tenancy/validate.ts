/**
 * Input validation for services: the HTTP layer validates bodies with the same schemas, but the
 * services are also called directly (SDK, demo seed, CLI), so they validate again and report
 * failures as VALIDATION errors naming each field by its dotted path (`attributes.floors`).
 */
import type { ZodType } from 'zod';
import { GatehouseError, type FieldError } from '../errors.ts';

export function issuesToFields(issues: readonly { code: string; path: readonly PropertyKey[]; message: string; keys?: string[] }[], prefix?: string): FieldError[] {
  const name = (path: readonly PropertyKey[]) => [prefix, ...path.map(String)].filter((p) => p !== undefined && p !== '').join('.') || 'body';
  return issues.flatMap((i): FieldError[] =>
    i.code === 'unrecognized_keys' && i.keys ? i.keys.map((k) => ({ field: name([...i.path, k]), message: 'Unknown field' })) : [{ field: name(i.path), message: i.message }],
  );
}

export function invalid(errors: FieldError[]): GatehouseError {
  const [first] = errors;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return new GatehouseError('VALIDATION', first ? `${first.field}: ${first.message}${more}` : 'The request is invalid', { errors });
}

/** Parses `value` with `schema` or throws VALIDATION naming the fields (under `prefix` if given). */
export function parse<T>(schema: ZodType<T>, value: unknown, prefix?: string): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw invalid(issuesToFields(r.error.issues as never, prefix));
}

/** Applies a JSON merge patch to attributes: a key set to null is removed. */
export function mergeAttributes(current: Record<string, unknown>, patch: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!patch) return current;
  const out: Record<string, unknown> = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** Tenant and role names are unique case- and space-insensitively. */
export const normalizeName = (name: string) => name.trim().replace(/\s+/g, ' ').toLowerCase();
