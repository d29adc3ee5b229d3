/**
 * The table definition: the one source of truth for the key schema, the five GSIs and TTL.
 * The CreateTable input (dev, tests, CLI) and the CloudFormation template are both derived from it.
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import YAML from 'yaml';

export const GSI_NAMES = ['GSI1', 'GSI2', 'GSI3', 'GSI4', 'GSI5'] as const;
export type IndexName = (typeof GSI_NAMES)[number];

export const TABLE = {
  partitionKey: 'PK',
  sortKey: 'SK',
  indexes: GSI_NAMES.map((name) => ({ name, partitionKey: `${name}PK`, sortKey: `${name}SK` })),
  ttlAttribute: 'expiresAt',
  billingMode: 'PAY_PER_REQUEST',
} as const;

export const indexKeyNames = (index: IndexName) => ({ pk: `${index}PK`, sk: `${index}SK` });

/** Every attribute that is part of a key (base table or index). */
export const KEY_ATTRIBUTES = [TABLE.partitionKey, TABLE.sortKey, ...TABLE.indexes.flatMap((i) => [i.partitionKey, i.sortKey])];

export function createTableInput(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: TABLE.billingMode,
    AttributeDefinitions: KEY_ATTRIBUTES.map((AttributeName) => ({ AttributeName, AttributeType: 'S' as const })),
    KeySchema: [
      { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: TABLE.indexes.map((i) => ({
      IndexName: i.name,
      KeySchema: [
        { AttributeName: i.partitionKey, KeyType: 'HASH' as const },
        { AttributeName: i.sortKey, KeyType: 'RANGE' as const },
      ],
      Projection: { ProjectionType: 'ALL' as const },
    })),
  };
}

/** The CloudFormation resource for the table (also embedded by the deploy template). */
export function tableResource(tableName?: string) {
  const input = createTableInput(tableName ?? 'app_data');
  return {
    Type: 'AWS::DynamoDB::Table',
    DeletionPolicy: 'Retain',
    UpdateReplacePolicy: 'Retain',
    Properties: {
      ...(tableName ? { TableName: tableName } : {}),
      BillingMode: input.BillingMode,
      AttributeDefinitions: input.AttributeDefinitions,
      KeySchema: input.KeySchema,
      GlobalSecondaryIndexes: input.GlobalSecondaryIndexes,
      TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
    },
  };
}

export function tableTemplate(tableName?: string): Record<string, unknown> {
  return {
    AWSTemplateFormatVersion: '2010-09-09',
    Description: 'Gatehouse: the single DynamoDB table (PK/SK, GSI1-GSI5, TTL on expiresAt, on-demand)',
    Resources: { GatehouseTable: tableResource(tableName) },
    Outputs: {
      TableName: { Value: { Ref: 'GatehouseTable' } },
      TableArn: { Value: { 'Fn::GetAtt': ['GatehouseTable', 'Arn'] } },
    },
  };
}

export const tableTemplateYaml = (tableName?: string) => YAML.stringify(tableTemplate(tableName));
