import { Client, Connection } from '@temporalio/client';

export async function connectTemporalClient(options: { address: string; namespace: string }): Promise<Client> {
  const connection = await Connection.connect({ address: options.address, connectTimeout: '10 seconds' });
  return new Client({ connection, namespace: options.namespace });
}

export async function pingTemporal(client: Client): Promise<void> {
  await client.workflowService.getSystemInfo({});
}
