/** Reading a partition of a project-shaped table (string `pk`/`sk`) through the document client. */
import { type DynamoDBDocumentClient, paginateQuery } from '@aws-sdk/lib-dynamodb';

/**
 * Every item under partition key `pk` whose sort key starts with `prefix`, in key order, read consistently across all
 * pages.
 */
export async function queryPrefix(
  doc: DynamoDBDocumentClient,
  tableName: string,
  pk: string,
  prefix: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  const pages = paginateQuery(
    { client: doc },
    {
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
      ConsistentRead: true,
    },
  );
  for await (const page of pages) items.push(...(page.Items ?? []));
  return items;
}
