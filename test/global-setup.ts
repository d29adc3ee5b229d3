/**
 * Vitest global setup: ONE DynamoDB Local for the whole run (every test file makes its own uniquely
 * named table on it, see harness.ts), or the DynamoDB at AWS_ENDPOINT_URL_DYNAMODB when set.
 * Runs in the main vitest process; test files run in forked workers and get the endpoint via inject().
 */
import type { TestProject } from 'vitest/node';
import { startDynamoLocal } from '../src/engine/local.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** e.g. http://127.0.0.1:41234 */
    dynamoEndpoint: string;
  }
}

export default async function setup(project: TestProject) {
  const given = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  if (given) {
    project.provide('dynamoEndpoint', given);
    return;
  }
  const local = await startDynamoLocal({
    // Only its output matters when something goes wrong; keep the run quiet otherwise.
    log: process.env.GATEHOUSE_DEBUG ? (s) => console.error(s) : undefined,
  });
  project.provide('dynamoEndpoint', local.endpoint);
  // Teardown: stop() resolves once the Java process has exited, so nothing outlives the run.
  return async () => {
    await local.stop();
  };
}
