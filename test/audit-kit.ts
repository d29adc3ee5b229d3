/**
 * Machinery of the audit-atomicity suite (principle 6: a mutation and its audit record commit in
 * one TransactWriteItems): a recording DynamoDB document client, the audit records a request sent
 * and stored, and the mutation routes of an app's OpenAPI document.
 *
 * Recording is scoped with AsyncLocalStorage, so concurrent tests each see only their own requests:
 *
 *   const doc = recordingClient(t.doc);            // give it to createGatehouse({ clients: { raw, doc } })
 *   const { result, sent } = await recorded(() => app.request(...));
 *   const { sent } = await recorded(() => app.request(...), { breakAudit: true });
 *
 * With `breakAudit`, every TransactWriteItems sent in the scope has its AuditRecord put's condition
 * turned from `attribute_not_exists` into `attribute_exists`: DynamoDB cancels the transaction with
 * ConditionalCheckFailed on exactly that action (a real failure of the audit write, not a mock).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { allShards, keys, SHARDS } from '../src/store/keys.ts';
import type { Item, Store } from '../src/store/store.ts';

/** One command sent through the recording client: its name without `Command`, its input, and whether it succeeded. */
export interface Sent {
  name: string;
  input: Record<string, unknown>;
  ok?: boolean;
  error?: string;
}

interface Scope {
  sent: Sent[];
  breakAudit: boolean;
}

const scope = new AsyncLocalStorage<Scope>();

export const READ_COMMANDS = new Set(['Get', 'Query', 'BatchGet', 'TransactGet']);
export const isWrite = (s: Sent) => !READ_COMMANDS.has(s.name);

type TxItem = { Put?: { Item: Item; ConditionExpression?: string }; Update?: unknown; Delete?: unknown; ConditionCheck?: unknown };

/** A document client that records every command sent inside `recorded(...)` (and breaks audit puts on request). */
export function recordingClient(doc: DynamoDBDocumentClient): DynamoDBDocumentClient {
  return new Proxy(doc, {
    get(target, prop, recv) {
      if (prop !== 'send') return Reflect.get(target, prop, recv);
      return async (cmd: { constructor: { name: string }; input: Record<string, unknown> }, ...rest: unknown[]) => {
        const s = scope.getStore();
        const name = cmd.constructor.name.replace(/Command$/, '');
        const rec: Sent = { name, input: cmd.input };
        s?.sent.push(rec);
        if (s?.breakAudit && name === 'TransactWrite') {
          for (const a of cmd.input.TransactItems as TxItem[]) {
            if (a.Put?.Item.Type === 'AuditRecord') a.Put.ConditionExpression = a.Put.ConditionExpression!.replace('attribute_not_exists', 'attribute_exists');
          }
        }
        try {
          const out = await target.send(cmd as never, ...(rest as []));
          rec.ok = true;
          return out;
        } catch (e) {
          rec.ok = false;
          rec.error = (e as Error).name;
          throw e;
        }
      };
    },
  });
}

/** Runs `fn` recording the commands it sends (and only those: concurrent scopes are separate). */
export async function recorded<T>(fn: () => Promise<T>, o: { breakAudit?: boolean } = {}): Promise<{ result: T; sent: Sent[] }> {
  const s: Scope = { sent: [], breakAudit: !!o.breakAudit };
  const result = await scope.run(s, fn);
  return { result, sent: s.sent };
}

export const transactItems = (s: Sent): TxItem[] => (s.name === 'TransactWrite' ? (s.input.TransactItems as TxItem[]) : []);

/** The AuditRecord items a write puts. */
export const auditPutsOf = (s: Sent): Item[] => transactItems(s).flatMap((a) => (a.Put?.Item.Type === 'AuditRecord' ? [a.Put.Item] : []));

/** Writes that DynamoDB accepted. */
export const successfulWrites = (sent: Sent[]) => sent.filter((s) => isWrite(s) && s.ok);

/** A short description of writes, for assertion messages. */
export const describeWrites = (sent: Sent[]) =>
  sent
    .filter(isWrite)
    .map((s) => `${s.name}${s.ok ? '' : `(failed: ${s.error})`}[${transactItems(s).map((a) => `${Object.keys(a)[0]}:${String((a.Put?.Item.Type as string) ?? '')}`).join(',')}]`)
    .join(' ');

/** Stored audit records of a partition (`T`/`tenantId`, all shards, one parallel wave), optionally of one request. */
export async function storedAuditRecords(store: Store, T: string, tenantId: string, requestId?: string): Promise<Item[]> {
  const filter = requestId ? { expression: '#r = :r', names: { '#r': 'requestId' }, values: { ':r': requestId } } : undefined;
  const shards = await Promise.all(allShards(SHARDS.audit).map((s) => store.queryAll<Item>({ pk: keys.auditShard(T, tenantId, s).pk, ...(filter ? { filter } : {}) })));
  return shards.flat();
}

export const MUTATION_METHODS = ['post', 'put', 'patch', 'delete'];

/** `METHOD /path` of every POST/PUT/PATCH/DELETE operation in the app's OpenAPI document. */
export async function mutationRoutesOf(app: { request(path: string): Response | Promise<Response> }): Promise<string[]> {
  const res = await app.request('/openapi.json');
  if (res.status !== 200) throw new Error(`GET /openapi.json → ${res.status}: ${(await res.text()).slice(0, 300)}`);
  const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).filter((m) => MUTATION_METHODS.includes(m)).map((m) => `${m.toUpperCase()} ${p}`));
}
