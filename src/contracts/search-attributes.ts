// Custom search attributes the call workflow keeps current. Registered on the dev server by
// src/local/servers.ts and in docker-compose.yml; names and types are defined only here (the compose
// file's copy is checked against them by test/unit/docker-compose.test.ts).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SA_TEAM_ID = defineSearchAttributeKey('CallTeamId', SearchAttributeType.KEYWORD);
export const SA_STATUS = defineSearchAttributeKey('CallStatus', SearchAttributeType.KEYWORD);
export const SA_TO_NUMBER = defineSearchAttributeKey('CallToNumber', SearchAttributeType.KEYWORD);
export const SA_PROVIDER = defineSearchAttributeKey('CallProvider', SearchAttributeType.KEYWORD);
export const SA_SCHEDULED_FOR = defineSearchAttributeKey('CallScheduledFor', SearchAttributeType.DATETIME);

/** Name=Type pairs, as `temporal server start-dev --search-attribute` and `operator` want them. */
export const SEARCH_ATTRIBUTE_DEFINITIONS: ReadonlyArray<{ name: string; type: 'Keyword' | 'Datetime' }> = [
  { name: SA_TEAM_ID.name, type: 'Keyword' },
  { name: SA_STATUS.name, type: 'Keyword' },
  { name: SA_TO_NUMBER.name, type: 'Keyword' },
  { name: SA_PROVIDER.name, type: 'Keyword' },
  { name: SA_SCHEDULED_FOR.name, type: 'Datetime' },
];
