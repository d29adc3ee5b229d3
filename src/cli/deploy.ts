/** `gatehouse deploy …`: the CloudFormation template of a whole deployment, and the route map. */
import type { Command } from 'commander';
import { deployTemplateYaml } from '../deploy/template.ts';
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
    .description('AWS deployment: CloudFormation template (table, API Lambda, authorizer, least-privilege IAM) and the route map')
    .addHelpText(
      'after',
      `
Examples:
  $ gatehouse deploy template > gatehouse.yaml
  $ aws cloudformation deploy --template-file gatehouse.yaml --stack-name gatehouse --capabilities CAPABILITY_IAM \\
      --parameter-overrides CodeS3Bucket=my-bucket CodeS3Key=gatehouse.zip CursorSecret=$(openssl rand -hex 32)
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
    .command('routes')
    .description("print the route map (METHOD /path → permission, tenant parameter) the Lambda authorizer uses")
    .action(async () => {
      ctx.out(`${JSON.stringify(await currentRouteMap(), null, 2)}\n`);
    });
}
