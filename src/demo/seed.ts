/**
 * Demo data for `npm start`: idempotent, so restarting on a kept data dir changes nothing.
 * Each domain contributes its part.
 */
import type { Gatehouse } from '../gatehouse.ts';

export interface DemoExample {
  title: string;
  path: string;
  body: unknown;
}

export interface DemoResult {
  summary: string[];
  examples: DemoExample[];
}

export async function seedDemo(_gh: Gatehouse): Promise<DemoResult> {
  return { summary: [], examples: [] };
}
