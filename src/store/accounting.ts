/**
 * Request accounting: an SDK middleware that records every DynamoDB request against the logical
 * operation it belongs to (an AsyncLocalStorage scope), with its command, index, consumed capacity
 * and the sequential "wave" it was issued in. Requests issued in parallel share a wave; a request
 * issued after another one of the same operation completed starts a later wave. Formally a
 * request's wave is 1 + the highest wave that had completed when it was sent, so `waves` is the
 * length of the critical path of round trips.
 *
 * It also refuses Scan outright: the product never scans (design brief, principle 1).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export interface RequestRecord {
  command: string;
  index?: string;
  wave: number;
  capacity: number;
  ms: number;
}

export class OperationLog {
  readonly requests: RequestRecord[] = [];
  private completedWave = 0;
  private maxWave = 0;
  constructor(readonly name: string) {}

  start(): number {
    const wave = this.completedWave + 1;
    this.maxWave = Math.max(this.maxWave, wave);
    return wave;
  }
  finish(rec: RequestRecord) {
    this.completedWave = Math.max(this.completedWave, rec.wave);
    this.requests.push(rec);
  }
  get waves() {
    return this.maxWave;
  }
  get count() {
    return this.requests.length;
  }
  get capacity() {
    return this.requests.reduce((s, r) => s + r.capacity, 0);
  }
  /** e.g. { GetItem: 2, 'Query:GSI1': 1 } */
  byCommand(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.requests) {
      const k = r.index ? `${r.command}:${r.index}` : r.command;
      out[k] = (out[k] ?? 0) + 1;
    }
    return out;
  }
  summary() {
    return { name: this.name, requests: this.count, waves: this.waves, capacity: this.capacity, byCommand: this.byCommand() };
  }
}

const current = new AsyncLocalStorage<OperationLog>();

/** Totals since process start, across all operations (the Scan guard reads these). */
export const totals = { requests: 0, scans: 0, byCommand: {} as Record<string, number> };

/** Run `fn` as one logical operation and return its result with the request log. */
export async function measure<T>(name: string, fn: () => Promise<T>): Promise<{ result: T; log: OperationLog }> {
  const log = new OperationLog(name);
  const result = await current.run(log, fn);
  return { result, log };
}

export const currentOperation = () => current.getStore();

export class ScanRefusedError extends Error {
  constructor() {
    super('Scan is never sent by Gatehouse (design brief, principle 1)');
    this.name = 'ScanRefusedError';
  }
}

const INSTALLED = Symbol.for('gatehouse.accounting');

export function installAccounting(client: DynamoDBClient) {
  const c = client as DynamoDBClient & { [INSTALLED]?: boolean };
  if (c[INSTALLED]) return;
  c[INSTALLED] = true;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName ?? 'Unknown').replace(/Command$/, '');
      totals.requests++;
      totals.byCommand[command] = (totals.byCommand[command] ?? 0) + 1;
      if (command === 'Scan') {
        totals.scans++;
        throw new ScanRefusedError();
      }
      const input = args.input as { IndexName?: string; ReturnConsumedCapacity?: string };
      // Ask for capacity on every request so the accounting can report it.
      if (input && typeof input === 'object' && !input.ReturnConsumedCapacity) input.ReturnConsumedCapacity = 'TOTAL';
      const log = current.getStore();
      const wave = log?.start() ?? 0;
      const t0 = performance.now();
      let capacity = 0;
      try {
        const out = await next(args);
        const cc = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
        capacity = Array.isArray(cc) ? cc.reduce((s, x) => s + (x.CapacityUnits ?? 0), 0) : (cc?.CapacityUnits ?? 0);
        return out;
      } finally {
        log?.finish({ command, index: input?.IndexName, wave, capacity, ms: performance.now() - t0 });
      }
    },
    { step: 'initialize', name: 'gatehouseAccounting', priority: 'high' },
  );
}
