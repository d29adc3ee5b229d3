/** `gatehouse deploy …`: the CloudFormation template of a whole deployment, the Lambda code zip it names, and the route map. */
import path from 'node:path';
import type { Command } from 'commander';
import { buildLambdaBundle, displayPath, formatBytes } from '../deploy/bundle.ts';
import { deployTemplateYaml, LAMBDA_HANDLERS } from '../deploy/template.ts';
import { routeMapOf, type RouteMap } from '../lambda/routes.ts';
import type { CliContext } from './context.ts';

/** The route map of the app as the composition root builds it (no DynamoDB request is sent). */
async function currentRouteMap(): Promise<RouteMap> {
  const { createGatehouse } = await import('../gatehouse.ts');
  const gh = await createGatehouse({ endpoint: 'http://127.0.0.1:9', tableName: 'unused', logger: (await import('../http/logger.ts')).createLogger('silent') });
  try {
    return routeMapOf(gh.app());
  } finally {
    gh.close();
  }
}

export function registerDeployCommands(program: Command, ctx: CliContext) {
  const deploy = program
    .command('deploy')
    .description('AWS deployment: CloudFormation template (table, API Lambda, authorizer, least-privilege IAM), the Lambda code zip, and the route map')
    .addHelpText(
      'after',
      `
Examples:
  $ gatehouse deploy bundle --out dist/lambda.zip     # the code both functions run (npm run build:lambda)
  $ aws s3 cp dist/lambda.zip s3://my-bucket/gatehouse.zip
  $ gatehouse deploy template > gatehouse.yaml
  $ aws cloudformation deploy --template-file gatehouse.yaml --stack-name gatehouse --capabilities CAPABILITY_IAM \\
      --parameter-overrides CodeS3Bucket=my-bucket CodeS3Key=gatehouse.zip CursorSecret=$(openssl rand -hex 32) DataKey=$(openssl rand -base64 32)
  $ gatehouse deploy template --routes      # one API Gateway route per API route instead of ANY /v1/{proxy+}
  $ gatehouse deploy routes                 # the authorizer's route map as JSON`,
    );

  deploy
    .command('template')
    .description('print the CloudFormation (YAML) template; its table is the one the code creates')
    .option('-n, --table-name <name>', 'set TableName (default: CloudFormation generates one)')
    .option('--routes', 'declare one API Gateway route per API route (default: ANY /v1/{proxy+})')
    .action(async (opts: { tableName?: string; routes?: boolean }) => {
      ctx.out(deployTemplateYaml({ tableName: opts.tableName, routeMap: opts.routes ? await currentRouteMap() : undefined }));
    });

  deploy
    .command('bundle')
    .description(`build the Lambda code zip the template's CodeS3Key names: ${LAMBDA_HANDLERS.api} and ${LAMBDA_HANDLERS.authorizer} (esbuild, Node 20, ESM), the /docs assets; needs the zip command`)
    .option('-o, --out <file>', 'the zip to write', 'dist/lambda.zip')
    .option('--hierarchy <file>', 'also ship this hierarchy JSON as hierarchies/<file name> (repeatable); deploy with Hierarchy=hierarchies/<file name>', (v: string, acc: string[] = []) => [...acc, v])
    .addHelpText(
      'after',
      `
The zip holds lambda/api.js and lambda/authorizer.js (every dependency inside, the AWS SDK too),
their source maps (NODE_OPTIONS=--enable-source-maps uses them), lambda/package.json
({"type":"module"}), swagger-ui-dist's assets for /docs, and the --hierarchy files. The three
built-in hierarchies are part of the code.

Examples:
  $ gatehouse deploy bundle
  $ gatehouse deploy bundle --out build/gatehouse.zip --hierarchy ./my-hierarchy.json`,
    )
    .action(async (opts: { out: string; hierarchy?: string[] }) => {
      const hierarchies = opts.hierarchy ?? [];
      const b = await buildLambdaBundle({ out: opts.out, hierarchies, progress: (line) => ctx.err(`${line}\n`) });
      const shown = displayPath(b.zip);
      const key = `gatehouse-${b.sha256.slice(0, 12)}.zip`;
      const hierarchy = hierarchies.length ? ` Hierarchy=hierarchies/${path.basename(hierarchies[0])}` : '';
      ctx.out(
        `wrote ${shown}  ${formatBytes(b.bytes)}  sha256 ${b.sha256}\n` +
          `handlers: ${b.handlers.join(', ')}\n` +
          `\nNext: upload it under a new key (CloudFormation updates the functions' code only when CodeS3Key changes), then deploy:\n` +
          `  aws s3 cp ${shown} s3://<bucket>/${key}\n` +
          `  gatehouse deploy template > gatehouse.yaml\n` +
          `  aws cloudformation deploy --template-file gatehouse.yaml --stack-name gatehouse --capabilities CAPABILITY_IAM \\\n` +
          `      --parameter-overrides CodeS3Bucket=<bucket> CodeS3Key=${key} \\\n` +
          `      CursorSecret=$(openssl rand -hex 32) DataKey=$(openssl rand -base64 32)${hierarchy}   # secrets: first deploy only (later ones keep them)\n`,
      );
    });

  deploy
    .command('routes')
    .description("print the route map (METHOD /path → permission, tenant parameter) the Lambda authorizer uses")
    .action(async () => {
      ctx.out(`${JSON.stringify(await currentRouteMap(), null, 2)}\n`);
    });
}
