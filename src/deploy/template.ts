/**
 * The CloudFormation template of a Gatehouse deployment on AWS:
 *  - the table (`tableResource()`, the same definition the code creates tables from);
 *  - the API function (the Hono app behind API Gateway HTTP API, payload 2.0);
 *  - the Lambda REQUEST authorizer (IAM-policy responses, no result caching: a revocation applies
 *    to the next request);
 *  - least-privilege roles: the API may use only the item-level actions Gatehouse sends (no Scan,
 *    no table management) on this table and its indexes; the authorizer may only read the base
 *    table (principle 2: decisions never read an index) and touch API-key usage items, pinned
 *    with `dynamodb:LeadingKeys` to the `APIKEY#` partitions.
 * Printed by `gatehouse deploy template`. Both functions run the same code zip, built by
 * `gatehouse deploy bundle` (`npm run build:lambda`, src/deploy/bundle.ts; see docs/security.md),
 * uploaded to S3 and named by the CodeS3Bucket / CodeS3Key parameters.
 */
import YAML from 'yaml';
import { tableResource } from '../store/table.ts';
import type { RouteMap } from '../lambda/routes.ts';

/** Every DynamoDB action the data layer sends (GetItem, Query, BatchGetItem, writes, transactions' parts). */
export const API_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
] as const;
/** The authorizer decides from strongly consistent base-table reads only. */
export const AUTHORIZER_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'] as const;
/** …and records API-key usage (`APIKEY#<id> / USAGE`). */
export const AUTHORIZER_WRITE_ACTIONS = ['dynamodb:UpdateItem'] as const;
/** The functions' Handler properties (`<file in the zip without extension>.<export>`); the bundle builds these files. */
export const LAMBDA_HANDLERS = { api: 'lambda/api.handler', authorizer: 'lambda/authorizer.handler' } as const;
export const PUBLIC_ROUTES = ['GET /health', 'GET /openapi.json', 'GET /docs', 'GET /docs/{proxy+}'] as const;

export interface DeployTemplateOptions {
  /** Fixed table name; default: CloudFormation names it. */
  tableName?: string;
  /** One API Gateway route per entry (authorizer attached); default: `ANY /v1/{proxy+}`. */
  routeMap?: RouteMap;
  /** Lambda runtime; default nodejs20.x. */
  runtime?: string;
}

const sub = (s: string) => ({ 'Fn::Sub': s });
const ref = (name: string) => ({ Ref: name });
const getAtt = (resource: string, attr: string) => ({ 'Fn::GetAtt': [resource, attr] });
const optional = (cond: string, param: string) => ({ 'Fn::If': [cond, ref(param), ref('AWS::NoValue')] });

export function deployTemplate(o: DeployTemplateOptions = {}): Record<string, unknown> {
  const tableArn = getAtt('GatehouseTable', 'Arn');
  const indexArn = sub('${GatehouseTable.Arn}/index/*');
  const runtime = o.runtime ?? 'nodejs20.x';

  const env = {
    GATEHOUSE_TABLE: ref('GatehouseTable'),
    GATEHOUSE_HIERARCHY: ref('Hierarchy'),
    GATEHOUSE_CURSOR_SECRET: ref('CursorSecret'),
    // Required with NODE_ENV=production (src/identity/secrets.ts): without it both functions fail at cold start.
    GATEHOUSE_DATA_KEY: ref('DataKey'),
    NODE_ENV: 'production',
    GATEHOUSE_ADMIN_API_KEY: optional('HasAdminApiKey', 'AdminApiKey'),
    GATEHOUSE_JWT_ISSUER: optional('HasJwt', 'JwtIssuer'),
    GATEHOUSE_JWT_AUDIENCE: optional('HasJwt', 'JwtAudience'),
    GATEHOUSE_JWT_JWKS_URL: optional('HasJwt', 'JwtJwksUrl'),
    GATEHOUSE_PLATFORM_TENANT: optional('HasPlatformTenant', 'PlatformTenantId'),
  };

  const fn = (handler: string, role: string, description: string, memory: number) => ({
    Type: 'AWS::Lambda::Function',
    Properties: {
      Description: description,
      Runtime: runtime,
      Architectures: ['arm64'],
      Handler: handler,
      Code: { S3Bucket: ref('CodeS3Bucket'), S3Key: ref('CodeS3Key') },
      Role: getAtt(role, 'Arn'),
      MemorySize: memory,
      Timeout: 10,
      Environment: { Variables: env },
    },
  });

  const assumeLambda = {
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' }],
  };
  const logs = [sub('arn:${AWS::Partition}:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole')];

  const routeKeys = o.routeMap ? Object.keys(o.routeMap).sort() : ['ANY /v1/{proxy+}'];
  const routes: Record<string, unknown> = {};
  routeKeys.forEach((routeKey, i) => {
    routes[`Route${String(i).padStart(3, '0')}`] = {
      Type: 'AWS::ApiGatewayV2::Route',
      Properties: {
        ApiId: ref('HttpApi'),
        RouteKey: routeKey,
        Target: sub('integrations/${ApiIntegration}'),
        AuthorizationType: 'CUSTOM',
        AuthorizerId: ref('GatehouseAuthorizer'),
      },
    };
  });
  PUBLIC_ROUTES.forEach((routeKey, i) => {
    routes[`PublicRoute${i}`] = {
      Type: 'AWS::ApiGatewayV2::Route',
      Properties: { ApiId: ref('HttpApi'), RouteKey: routeKey, Target: sub('integrations/${ApiIntegration}'), AuthorizationType: 'NONE' },
    };
  });

  return {
    AWSTemplateFormatVersion: '2010-09-09',
    Description: 'Gatehouse: DynamoDB table, API Lambda behind an HTTP API, Lambda authorizer, least-privilege roles',
    Parameters: {
      CodeS3Bucket: { Type: 'String', Description: 'S3 bucket of the Lambda bundle' },
      CodeS3Key: { Type: 'String', Description: 'S3 key of the Lambda bundle (the zip `gatehouse deploy bundle` builds: lambda/api.js, lambda/authorizer.js)' },
      Hierarchy: { Type: 'String', Default: 'facilities', Description: 'Scope hierarchy: facilities, platform, chapters, or a path in the bundle (e.g. hierarchies/mine.json from gatehouse deploy bundle --hierarchy mine.json)' },
      CursorSecret: { Type: 'String', NoEcho: true, MinLength: 16, Description: 'Signs pagination cursors; the same on every instance' },
      DataKey: {
        Type: 'String',
        NoEcho: true,
        AllowedPattern: '^[A-Za-z0-9+/_-]{43}=?$',
        ConstraintDescription: '32 bytes, base64-encoded: openssl rand -base64 32',
        Description: 'GATEHOUSE_DATA_KEY: encrypts MFA secrets (32 bytes, base64: openssl rand -base64 32); keep it, stored secrets need it',
      },
      AdminApiKey: { Type: 'String', NoEcho: true, Default: '', Description: 'Bootstrap platform-admin key (GATEHOUSE_ADMIN_API_KEY); empty: none' },
      JwtIssuer: { Type: 'String', Default: '', Description: 'Trusted JWT issuer (iss); empty: API keys only' },
      JwtAudience: { Type: 'String', Default: '', Description: 'Required JWT audience (aud)' },
      JwtJwksUrl: { Type: 'String', Default: '', Description: "The issuer's JWKS URL" },
      PlatformTenantId: { Type: 'String', Default: '', Description: 'Tenant whose gatehouse:platform:admin holders are platform admins' },
      ThrottlingRateLimit: { Type: 'Number', Default: 1000, Description: 'API-wide requests per second (the per-instance token bucket is per caller)' },
      ThrottlingBurstLimit: { Type: 'Number', Default: 2000 },
    },
    Conditions: {
      HasAdminApiKey: { 'Fn::Not': [{ 'Fn::Equals': [ref('AdminApiKey'), ''] }] },
      HasJwt: { 'Fn::Not': [{ 'Fn::Equals': [ref('JwtIssuer'), ''] }] },
      HasPlatformTenant: { 'Fn::Not': [{ 'Fn::Equals': [ref('PlatformTenantId'), ''] }] },
    },
    Resources: {
      GatehouseTable: tableResource(o.tableName),

      ApiRole: {
        Type: 'AWS::IAM::Role',
        Properties: {
          AssumeRolePolicyDocument: assumeLambda,
          ManagedPolicyArns: logs,
          Policies: [
            {
              PolicyName: 'gatehouse-table',
              PolicyDocument: {
                Version: '2012-10-17',
                Statement: [{ Sid: 'TableAndIndexes', Effect: 'Allow', Action: [...API_ACTIONS], Resource: [tableArn, indexArn] }],
              },
            },
          ],
        },
      },
      AuthorizerRole: {
        Type: 'AWS::IAM::Role',
        Properties: {
          AssumeRolePolicyDocument: assumeLambda,
          ManagedPolicyArns: logs,
          Policies: [
            {
              PolicyName: 'gatehouse-authorizer',
              PolicyDocument: {
                Version: '2012-10-17',
                Statement: [
                  { Sid: 'ReadBaseTable', Effect: 'Allow', Action: [...AUTHORIZER_READ_ACTIONS], Resource: [tableArn] },
                  {
                    Sid: 'TouchApiKeyUsage',
                    Effect: 'Allow',
                    Action: [...AUTHORIZER_WRITE_ACTIONS],
                    Resource: [tableArn],
                    Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['APIKEY#*'] } },
                  },
                ],
              },
            },
          ],
        },
      },

      ApiFunction: fn(LAMBDA_HANDLERS.api, 'ApiRole', 'Gatehouse HTTP API (Hono app, API Gateway payload 2.0)', 1024),
      AuthorizerFunction: fn(LAMBDA_HANDLERS.authorizer, 'AuthorizerRole', 'Gatehouse Lambda REQUEST authorizer', 512),

      HttpApi: { Type: 'AWS::ApiGatewayV2::Api', Properties: { Name: sub('${AWS::StackName}-gatehouse'), ProtocolType: 'HTTP' } },
      ApiIntegration: {
        Type: 'AWS::ApiGatewayV2::Integration',
        Properties: { ApiId: ref('HttpApi'), IntegrationType: 'AWS_PROXY', IntegrationUri: getAtt('ApiFunction', 'Arn'), PayloadFormatVersion: '2.0' },
      },
      GatehouseAuthorizer: {
        Type: 'AWS::ApiGatewayV2::Authorizer',
        Properties: {
          ApiId: ref('HttpApi'),
          Name: 'gatehouse',
          AuthorizerType: 'REQUEST',
          AuthorizerUri: sub('arn:${AWS::Partition}:apigateway:${AWS::Region}:lambda:path/2015-03-31/functions/${AuthorizerFunction.Arn}/invocations'),
          AuthorizerPayloadFormatVersion: '2.0',
          EnableSimpleResponses: false,
          IdentitySource: ['$request.header.Authorization'],
          // No caching: a revoked key or assignment is refused on the very next request.
          AuthorizerResultTtlInSeconds: 0,
        },
      },
      ...routes,
      DefaultStage: {
        Type: 'AWS::ApiGatewayV2::Stage',
        Properties: {
          ApiId: ref('HttpApi'),
          StageName: '$default',
          AutoDeploy: true,
          DefaultRouteSettings: { ThrottlingRateLimit: ref('ThrottlingRateLimit'), ThrottlingBurstLimit: ref('ThrottlingBurstLimit') },
        },
      },
      ApiInvokePermission: {
        Type: 'AWS::Lambda::Permission',
        Properties: { Action: 'lambda:InvokeFunction', FunctionName: ref('ApiFunction'), Principal: 'apigateway.amazonaws.com', SourceArn: sub('arn:${AWS::Partition}:execute-api:${AWS::Region}:${AWS::AccountId}:${HttpApi}/*') },
      },
      AuthorizerInvokePermission: {
        Type: 'AWS::Lambda::Permission',
        Properties: { Action: 'lambda:InvokeFunction', FunctionName: ref('AuthorizerFunction'), Principal: 'apigateway.amazonaws.com', SourceArn: sub('arn:${AWS::Partition}:execute-api:${AWS::Region}:${AWS::AccountId}:${HttpApi}/authorizers/${GatehouseAuthorizer}') },
      },
    },
    Outputs: {
      ApiUrl: { Value: sub('https://${HttpApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}') },
      TableName: { Value: ref('GatehouseTable') },
      TableArn: { Value: tableArn },
    },
  };
}

export const deployTemplateYaml = (o: DeployTemplateOptions = {}) => YAML.stringify(deployTemplate(o), { aliasDuplicateObjects: false });
