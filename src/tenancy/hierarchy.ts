/**
 * The hierarchy loader (design brief §3). A deployment declares its tenant kind and scope kinds in
 * a JSON file; attribute schemas are described declaratively and turned into strict zod schemas
 * here, so a config is data (no code, no extra parser). Anything wrong stops start-up with a
 * message naming the file and the offending entry.
 *
 *   GATEHOUSE_HIERARCHY=facilities | platform | chapters | ./path/to/hierarchy.json
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z, type ZodType } from 'zod';
import { GatehouseError } from '../errors.ts';
import { kindPrefix, RESERVED_PREFIXES } from '../store/keys.ts';
import type { Hierarchy, ResourceType, ScopeKindDef } from './model.ts';
// The shipped hierarchies are imported, not read from disk next to this file: a path relative to
// import.meta.url points elsewhere once the code is bundled (`gatehouse deploy bundle`), while an
// import travels inside the bundle and works the same from source.
import facilitiesJson from '../../hierarchies/facilities.json' with { type: 'json' };
import platformJson from '../../hierarchies/platform.json' with { type: 'json' };
import chaptersJson from '../../hierarchies/chapters.json' with { type: 'json' };

export const BUILT_IN_HIERARCHIES = ['facilities', 'platform', 'chapters'] as const;
export const DEFAULT_HIERARCHY = 'facilities';
export const RESOURCE_TYPES: readonly ResourceType[] = ['address', 'tech_user', 'tool'];

const BUILT_IN: Record<(typeof BUILT_IN_HIERARCHIES)[number], unknown> = { facilities: facilitiesJson, platform: platformJson, chapters: chaptersJson };
const isBuiltIn = (nameOrPath: string): nameOrPath is (typeof BUILT_IN_HIERARCHIES)[number] => (BUILT_IN_HIERARCHIES as readonly string[]).includes(nameOrPath);

/** Bounds that keep every node well inside DynamoDB's item and key limits. */
export const LIMITS = {
  /** Serialized size of a node's attributes (the node is also copied to its child edge). */
  attributeBytes: 16 * 1024,
  /** Default and hard maximum for a string attribute. */
  stringLength: 1000,
  stringLengthMax: 10_000,
  mapBytes: 8 * 1024,
  mapBytesMax: 64 * 1024,
  /** Depth of the tree (the materialized path is a sort key: ≤ 1024 bytes). */
  depth: 12,
} as const;

const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const KIND_RE = /^[a-z][a-z0-9_]{0,31}$/;

// ---- the declarative attribute spec -------------------------------------------------------------

const common = { required: z.boolean().optional(), description: z.string().max(500).optional() };
const scalarSpecs = [
  z.strictObject({
    type: z.literal('string'),
    minLength: z.number().int().min(0).optional(),
    maxLength: z.number().int().min(1).max(LIMITS.stringLengthMax).optional(),
    pattern: z.string().optional(),
    format: z.enum(['email', 'url', 'date', 'date-time', 'ulid']).optional(),
    ...common,
  }),
  z.strictObject({ type: z.literal('number'), min: z.number().optional(), max: z.number().optional(), integer: z.boolean().optional(), ...common }),
  z.strictObject({ type: z.literal('boolean'), ...common }),
  z.strictObject({ type: z.literal('enum'), values: z.array(z.string().min(1).max(100)).min(1).max(200), ...common }),
] as const;
const AttributeSpec = z.discriminatedUnion('type', [
  ...scalarSpecs,
  z.strictObject({ type: z.literal('map'), maxBytes: z.number().int().min(1).max(LIMITS.mapBytesMax).optional(), maxKeys: z.number().int().min(1).max(1000).optional(), ...common }),
  z.strictObject({ type: z.literal('geo'), ...common }),
  z.strictObject({ type: z.literal('array'), items: z.discriminatedUnion('type', [...scalarSpecs]), maxItems: z.number().int().min(1).max(1000).optional(), ...common }),
]);
export type AttributeSpec = z.infer<typeof AttributeSpec>;

const Attributes = z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, 'attribute names are letters, digits and _ (≤ 64)'), AttributeSpec);
const Resources = z.array(z.enum(RESOURCE_TYPES as [ResourceType, ...ResourceType[]])).optional();

const HierarchyFile = z.strictObject({
  $schema: z.string().optional(),
  name: z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/),
  description: z.string().max(1000).optional(),
  tenant: z.strictObject({ kind: z.string(), attributes: Attributes.optional(), resources: Resources }),
  kinds: z.record(
    z.string(),
    z.strictObject({
      parent: z.string(),
      attributes: Attributes.optional(),
      uniqueCode: z.string().optional(),
      links: z.array(z.string()).optional(),
      resources: Resources,
      catalog: z.boolean().optional(),
      description: z.string().max(1000).optional(),
    }),
  ),
});
export type HierarchyFile = z.infer<typeof HierarchyFile>;

const jsonBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');

function scalarToZod(spec: z.infer<(typeof scalarSpecs)[number]>, where: string, fail: (m: string) => never): ZodType {
  switch (spec.type) {
    case 'string': {
      // The format schemas share ZodString's min/max/regex checks.
      type Str = ZodType<string> & { min(n: number): Str; max(n: number): Str; regex(re: RegExp, message?: string): Str };
      let s = z.string() as unknown as Str;
      if (spec.format === 'email') s = z.email() as unknown as Str;
      else if (spec.format === 'url') s = z.url({ protocol: /^https?$/ }) as unknown as Str;
      else if (spec.format === 'date') s = z.iso.date() as unknown as Str;
      else if (spec.format === 'date-time') s = z.iso.datetime({ offset: true }) as unknown as Str;
      else if (spec.format === 'ulid') s = z.string().regex(ULID_RE, 'Expected a ULID') as unknown as Str;
      if (spec.minLength !== undefined) s = s.min(spec.minLength);
      s = s.max(spec.maxLength ?? LIMITS.stringLength);
      if (spec.pattern !== undefined) {
        let re: RegExp;
        try {
          re = new RegExp(spec.pattern);
        } catch (e) {
          fail(`${where}.pattern is not a valid regular expression (${(e as Error).message})`);
        }
        s = s.regex(re, `Must match ${spec.pattern}`);
      }
      return s;
    }
    case 'number': {
      if (spec.min !== undefined && spec.max !== undefined && spec.min > spec.max) fail(`${where}: min ${spec.min} is greater than max ${spec.max}`);
      let n = spec.integer ? z.number().int() : z.number();
      if (spec.min !== undefined) n = n.min(spec.min);
      if (spec.max !== undefined) n = n.max(spec.max);
      return n;
    }
    case 'boolean':
      return z.boolean();
    case 'enum':
      if (new Set(spec.values).size !== spec.values.length) fail(`${where}.values has duplicates`);
      return z.enum(spec.values as [string, ...string[]]);
  }
}

function specToZod(spec: AttributeSpec, where: string, fail: (m: string) => never): ZodType {
  switch (spec.type) {
    case 'map': {
      const maxBytes = spec.maxBytes ?? LIMITS.mapBytes;
      const maxKeys = spec.maxKeys ?? 100;
      return z
        .record(z.string().max(128), z.json())
        .refine((m) => Object.keys(m).length <= maxKeys, `At most ${maxKeys} keys`)
        .refine((m) => jsonBytes(m) <= maxBytes, `At most ${maxBytes} bytes of JSON`);
    }
    case 'geo':
      return z.strictObject({ latitude: z.number().min(-90).max(90), longitude: z.number().min(-180).max(180) });
    case 'array': {
      const item = scalarToZod(spec.items, `${where}.items`, fail);
      return z.array(item).max(spec.maxItems ?? 100);
    }
    default:
      return scalarToZod(spec, where, fail);
  }
}

/** A strict zod schema for a declared attribute map: unknown attributes are refused. */
export function attributesSchema(specs: Record<string, AttributeSpec>, where: string, fail: (m: string) => never): ZodType<Record<string, unknown>> {
  const shape: Record<string, ZodType> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const t = specToZod(spec, `${where}.${name}`, fail);
    shape[name] = spec.required ? t : t.optional();
  }
  return z
    .strictObject(shape)
    .refine((v) => jsonBytes(v) <= LIMITS.attributeBytes, `The attributes are larger than ${LIMITS.attributeBytes} bytes of JSON`) as unknown as ZodType<
    Record<string, unknown>
  >;
}

// ---- validation of the whole file ---------------------------------------------------------------

const RESERVED = new Set<string>(RESERVED_PREFIXES);

/** Validates a parsed hierarchy file and builds the Hierarchy. `source` names it in errors. */
export function parseHierarchy(json: unknown, source = 'hierarchy'): Hierarchy {
  const fail = (message: string): never => {
    throw new GatehouseError('CONFIG', `Invalid hierarchy ${source}: ${message}`, { source });
  };
  const parsed = HierarchyFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue.path.map(String).join('.') || '(root)';
    const what =
      issue.code === 'unrecognized_keys'
        ? `unknown field(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`
        : issue.code === 'invalid_key'
          ? 'invalid name: attribute names are letters, digits and _ (starting with a letter, ≤ 64)'
          : issue.message;
    fail(`${at}: ${what}`);
  }
  const file = parsed.data!;
  const tenantKind = file.tenant.kind;
  const kindNames = Object.keys(file.kinds);
  if (kindNames.length === 0) fail('kinds: declare at least one scope kind');

  const checkName = (name: string, where: string) => {
    if (!KIND_RE.test(name)) fail(`${where}: kind name "${name}" must be lower-case letters, digits and _ (start with a letter, ≤ 32)`);
    const prefix = kindPrefix(name);
    if (RESERVED.has(prefix)) fail(`${where}: kind name "${name}" is reserved (its key prefix ${prefix}# is used by Gatehouse itself)`);
  };
  checkName(tenantKind, 'tenant.kind');
  const prefixes = new Map<string, string>([[kindPrefix(tenantKind), tenantKind]]);
  for (const name of kindNames) {
    checkName(name, `kinds.${name}`);
    if (name === tenantKind) fail(`kinds.${name}: "${name}" is the tenant kind; it cannot also be a scope kind`);
    prefixes.set(kindPrefix(name), name);
  }
  // A kind whose prefix is another kind's code-guard prefix would share its keys.
  for (const [prefix, name] of prefixes) {
    const m = /^(.*)_CODE$/.exec(prefix);
    if (m && prefixes.has(m[1])) fail(`kinds.${name}: its key prefix ${prefix}# collides with the unique-code guard of kind "${prefixes.get(m[1])}"`);
  }

  const kinds: Record<string, ScopeKindDef> = {};
  for (const name of kindNames) {
    const k = file.kinds[name];
    const where = `kinds.${name}`;
    if (k.parent !== tenantKind && !file.kinds[k.parent]) {
      fail(`${where}.parent: unknown kind "${k.parent}" (declared: ${[tenantKind, ...kindNames].join(', ')})`);
    }
    if (k.parent === name) fail(`${where}.parent: a kind cannot be its own parent`);
    const specs = k.attributes ?? {};
    if (k.uniqueCode !== undefined) {
      const spec = specs[k.uniqueCode];
      if (!spec) fail(`${where}.uniqueCode: "${k.uniqueCode}" is not a declared attribute`);
      if (spec!.type !== 'string' || !spec!.required) fail(`${where}.uniqueCode: attribute "${k.uniqueCode}" must be a required string`);
    }
    const links = k.links ?? [];
    if (links.length > 1) fail(`${where}.links: at most one link per kind (a link is indexed in GSI2)`);
    for (const link of links) {
      if (!file.kinds[link]) fail(`${where}.links: unknown kind "${link}"`);
      if (link === name) fail(`${where}.links: a kind cannot link to itself`);
      const spec = specs[`${link}Id`];
      if (!spec || spec.type !== 'string') fail(`${where}.links: declare the attribute "${link}Id" (a string) that holds the linked ${link}'s id`);
    }
    kinds[name] = {
      name,
      prefix: kindPrefix(name),
      parent: k.parent,
      attributes: attributesSchema(specs, `${where}.attributes`, fail),
      ...(k.uniqueCode ? { uniqueCode: k.uniqueCode } : {}),
      ...(links.length ? { links } : {}),
      resources: [...new Set(k.resources ?? [])],
      catalog: k.catalog ?? false,
      children: [],
    };
  }
  // Every kind must reach the tenant kind without a cycle, within the depth limit.
  for (const name of kindNames) {
    const seen = [name];
    let cur = kinds[name].parent;
    while (cur !== tenantKind) {
      if (seen.includes(cur)) fail(`kinds.${name}: the parent chain has a cycle (${[...seen, cur].join(' → ')})`);
      seen.push(cur);
      cur = kinds[cur].parent;
    }
    if (seen.length > LIMITS.depth) fail(`kinds.${name}: the tree is deeper than ${LIMITS.depth} levels`);
  }
  for (const name of kindNames) {
    const p = kinds[name].parent;
    if (p !== tenantKind) kinds[p].children!.push(name);
  }
  return {
    name: file.name,
    ...(file.description ? { description: file.description } : {}),
    tenantKind,
    T: kindPrefix(tenantKind),
    tenantAttributes: attributesSchema(file.tenant.attributes ?? {}, 'tenant.attributes', fail),
    tenantResources: [...new Set(file.tenant.resources ?? [])],
    kinds,
  };
}

/**
 * Where a name or path points: a built-in name (shipped inside the code, see BUILT_IN above), else
 * a file path, relative to the working directory (on AWS Lambda: the bundle's root, /var/task).
 */
export function hierarchySource(nameOrPath: string): string {
  if (isBuiltIn(nameOrPath)) return `hierarchies/${nameOrPath}.json (built in)`;
  return path.resolve(nameOrPath);
}

/**
 * Loads the hierarchy named by `nameOrPath` (default: GATEHOUSE_HIERARCHY, else `facilities`).
 * Throws a CONFIG error naming the problem when the file is missing, not JSON, or invalid.
 */
export function loadHierarchy(nameOrPath: string = process.env.GATEHOUSE_HIERARCHY || DEFAULT_HIERARCHY): Hierarchy {
  if (isBuiltIn(nameOrPath)) return parseHierarchy(BUILT_IN[nameOrPath], hierarchySource(nameOrPath));
  const file = hierarchySource(nameOrPath);
  if (!existsSync(file)) {
    throw new GatehouseError(
      'CONFIG',
      `Invalid hierarchy ${nameOrPath}: no such file ${file} (GATEHOUSE_HIERARCHY takes ${BUILT_IN_HIERARCHIES.join(', ')} or a path to a JSON file)`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new GatehouseError('CONFIG', `Invalid hierarchy ${file}: not valid JSON (${(e as Error).message})`);
  }
  return parseHierarchy(json, file);
}

// ---- helpers over a loaded hierarchy ------------------------------------------------------------

/** Kinds whose parent is `kind` (the tenant kind for top-level kinds). */
export function childKinds(h: Hierarchy, kind: string): string[] {
  return Object.values(h.kinds)
    .filter((k) => k.parent === kind)
    .map((k) => k.name);
}

/** The key prefix of a kind or of the tenant kind; undefined for an unknown kind. */
export function prefixOf(h: Hierarchy, kind: string): string | undefined {
  if (kind === h.tenantKind) return h.T;
  return h.kinds[kind]?.prefix;
}

/** Resources a kind (or the tenant kind) may own. */
export function resourcesOf(h: Hierarchy, kind: string): ResourceType[] {
  if (kind === h.tenantKind) return h.tenantResources ?? [];
  return h.kinds[kind]?.resources ?? [];
}
