import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { createTableInput, TABLE } from '../store/table.ts';
import { main } from '../cli/main.ts';
import { API_ACTIONS, deployTemplate, PUBLIC_ROUTES } from './template.ts';

type Doc = { Parameters: Record<string, unknown>; Conditions: Record<string, unknown>; Resources: Record<string, { Type: string; Properties: Record<string, unknown>; Condition?: string }>; Outputs: Record<string, unknown> };

async function printed(args: string[]): Promise<string> {
  let out = '';
  const code = await main(['node', 'gatehouse', ...args], { out: (s) => void (out += s), err: () => undefined, env: {} });
  expect(code).toBe(0);
  return out;
}

/** Every Ref / GetAtt / ${…} in Fn::Sub names a parameter, a resource, a condition or a pseudo parameter. */
function danglingReferences(doc: Doc): string[] {
  const known = new Set([...Object.keys(doc.Parameters), ...Object.keys(doc.Resources), 'AWS::NoValue', 'AWS::Region', 'AWS::AccountId', 'AWS::Partition', 'AWS::StackName', 'AWS::URLSuffix']);
  const bad: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!v || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v)) {
      if (k === 'Ref' && typeof x === 'string' && !known.has(x)) bad.push(x);
      if (k === 'Fn::GetAtt' && Array.isArray(x) && !known.has(x[0])) bad.push(x[0]);
      if (k === 'Fn::Sub' && typeof x === 'string') for (const m of x.matchAll(/\$\{([^}.]+)[^}]*\}/g)) if (!known.has(m[1])) bad.push(m[1]);
      if (k === 'Fn::If' && Array.isArray(x) && !(x[0] in doc.Conditions)) bad.push(x[0]);
      walk(x);
    }
  };
  walk(doc.Resources);
  walk(doc.Outputs);
  return bad;
}

describe('deploy template', () => {
  it('`gatehouse deploy template` prints YAML whose table is the one the code creates', async () => {
    const doc = YAML.parse(await printed(['deploy', 'template', '--table-name', 'app_data'])) as Doc;
    const table = doc.Resources.GatehouseTable;
    expect(table.Type).toBe('AWS::DynamoDB::Table');
    const input = createTableInput('app_data');
    expect(table.Properties).toMatchObject({
      TableName: 'app_data',
      BillingMode: input.BillingMode,
      KeySchema: input.KeySchema,
      AttributeDefinitions: input.AttributeDefinitions,
      GlobalSecondaryIndexes: input.GlobalSecondaryIndexes,
      TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
    });
    expect((table.Properties.GlobalSecondaryIndexes as unknown[]).length).toBe(5);
    expect(danglingReferences(doc)).toEqual([]);
  });

  it('IAM is least privilege: only this table and its indexes, no Scan, no table management', () => {
    const doc = deployTemplate() as unknown as Doc;
    const statements = (role: string) =>
      (doc.Resources[role].Properties.Policies as { PolicyDocument: { Statement: { Action: string[]; Resource: unknown[]; Condition?: unknown }[] } }[]).flatMap((p) => p.PolicyDocument.Statement);
    const tableArn = { 'Fn::GetAtt': ['GatehouseTable', 'Arn'] };
    const indexArn = { 'Fn::Sub': '${GatehouseTable.Arn}/index/*' };

    const api = statements('ApiRole');
    expect(api).toHaveLength(1);
    expect(api[0].Action.sort()).toEqual([...API_ACTIONS].sort());
    expect(api[0].Resource).toEqual([tableArn, indexArn]);

    const authz = statements('AuthorizerRole');
    const reads = authz.find((s) => s.Action.includes('dynamodb:GetItem'))!;
    expect(reads.Action.sort()).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query']);
    // Decisions read the base table only (principle 2): no index ARN for the authorizer.
    expect(reads.Resource).toEqual([tableArn]);
    const writes = authz.find((s) => s.Action.includes('dynamodb:UpdateItem'))!;
    expect(writes.Action).toEqual(['dynamodb:UpdateItem']);
    expect(writes.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['APIKEY#*'] } });

    for (const s of [...api, ...authz]) {
      for (const a of s.Action) {
        expect(a).toMatch(/^dynamodb:/);
        expect(a).not.toMatch(/Scan|\*|Table|Delete(Table|Backup)|Export|Import/);
      }
      expect(JSON.stringify(s.Resource)).not.toContain('"*"');
    }
    // The data layer's transactions need only the item actions above (TransactWriteItems is not an IAM action).
    expect(API_ACTIONS).toEqual(expect.arrayContaining(['dynamodb:ConditionCheckItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']));
  });

  it('wires the API function, the REQUEST authorizer (payload 2.0, IAM policies, no caching) and the routes', () => {
    const doc = deployTemplate({ routeMap: { 'GET /v1/tenants/{tenantId}': { permission: 'gatehouse:tenants:read', tenantParam: 'tenantId' }, 'POST /v1/tenants': { permission: 'gatehouse:platform:admin' } } }) as unknown as Doc;
    expect(doc.Resources.GatehouseAuthorizer.Properties).toMatchObject({
      AuthorizerType: 'REQUEST',
      AuthorizerPayloadFormatVersion: '2.0',
      EnableSimpleResponses: false,
      AuthorizerResultTtlInSeconds: 0,
      IdentitySource: ['$request.header.Authorization'],
    });
    expect(doc.Resources.ApiIntegration.Properties).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });
    expect(doc.Resources.ApiFunction.Properties).toMatchObject({ Handler: 'lambda/api.handler', Runtime: 'nodejs20.x' });
    expect(doc.Resources.AuthorizerFunction.Properties).toMatchObject({ Handler: 'lambda/authorizer.handler' });
    // NODE_ENV=production refuses to start without the data key (src/identity/secrets.ts): both functions get it, never echoed.
    for (const fn of ['ApiFunction', 'AuthorizerFunction']) expect(doc.Resources[fn].Properties).toMatchObject({ Environment: { Variables: { NODE_ENV: 'production', GATEHOUSE_DATA_KEY: { Ref: 'DataKey' } } } });
    expect(doc.Parameters.DataKey).toMatchObject({ Type: 'String', NoEcho: true });
    const routes = Object.values(doc.Resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Route').map((r) => r.Properties);
    const byKey = new Map(routes.map((r) => [r.RouteKey as string, r]));
    expect(byKey.get('GET /v1/tenants/{tenantId}')).toMatchObject({ AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: 'GatehouseAuthorizer' } });
    expect(byKey.get('POST /v1/tenants')).toMatchObject({ AuthorizationType: 'CUSTOM' });
    for (const k of PUBLIC_ROUTES) expect(byKey.get(k)).toMatchObject({ AuthorizationType: 'NONE' });
    // Every authorized route is a /v1 route; nothing else is open.
    for (const r of routes) if (r.AuthorizationType === 'NONE') expect(PUBLIC_ROUTES).toContain(r.RouteKey);
    expect(danglingReferences(doc)).toEqual([]);
    // Default: one proxy route behind the authorizer.
    const proxy = Object.values((deployTemplate() as unknown as Doc).Resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Route' && r.Properties.AuthorizationType === 'CUSTOM');
    expect(proxy.map((r) => r.Properties.RouteKey)).toEqual(['ANY /v1/{proxy+}']);
  });
});
