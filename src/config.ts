/** Runtime configuration, read once from the environment and validated. */
import { z } from 'zod';

const schema = z.object({
  AWS_ENDPOINT_URL_DYNAMODB: z.string().url().optional(),
  AWS_REGION: z.string().optional(),
  GATEHOUSE_TABLE: z.string().min(3).max(255).default('app_data'),
  GATEHOUSE_HIERARCHY: z.string().default('facilities'),
  /** Signs pagination cursors (HMAC). Random per process when unset; set it when running several instances. */
  GATEHOUSE_CURSOR_SECRET: z.string().min(16).optional(),
  GATEHOUSE_ADMIN_API_KEY: z.string().min(16).optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NODE_ENV: z.string().default('development'),
});

export type Env = z.infer<typeof schema>;

export function readEnv(env: NodeJS.ProcessEnv = process.env): Env {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new Error(`Invalid configuration in the environment:\n${lines}`);
  }
  return parsed.data;
}

export const isProduction = (env: Env) => env.NODE_ENV === 'production';
