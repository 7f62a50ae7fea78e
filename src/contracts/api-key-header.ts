/** The request header that carries a team's API key (interface.md), for the server and its clients. */
export const API_KEY_HEADER = 'service-api-key';
