/**
 * The typed fetch client. The types in schema.gen.ts are generated from
 * api/openapi.yaml by openapi-typescript (`make generate`); openapi-fetch
 * (vendored in vendor/, so the package has no runtime dependency) turns
 * them into a typed fetch client. This file only names the schemas and
 * adds the API key, so every call stays exactly what the contract says.
 */
import createFetchClient from "../vendor/openapi-fetch/index.js";
import type { Client, ClientOptions as FetchClientOptions } from "../vendor/openapi-fetch/index.js";
import type { components, operations, paths } from "./schema.gen.js";

export type { components, operations, paths };

type Schemas = components["schemas"];
export type SubmitIntentRequest = Schemas["SubmitIntentRequest"];
export type Intent = Schemas["Intent"];
export type IntentStatus = Schemas["IntentStatus"];
export type IntentPage = Schemas["IntentPage"];
export type Attempt = Schemas["Attempt"];
export type Outcome = Schemas["Outcome"];
export type Contract = Schemas["Contract"];
export type TargetList = Schemas["TargetList"];
export type InvalidField = Schemas["InvalidField"];

/** The client: GET and POST take an API path and typed parameters. */
export type SubmissionManagerClient = Client<paths>;

/** Options of createClient; any other openapi-fetch option passes through. */
export interface ClientOptions extends Omit<FetchClientOptions, "baseUrl"> {
  /** Where the service answers, such as "http://127.0.0.1:8000". */
  baseUrl: string;
  /**
   * One of the keys the service was started with (--api-keys), sent as a
   * bearer token on every request. Leave it out when the service has none.
   */
  apiKey?: string;
}

/**
 * createClient returns a typed client for the service at baseUrl. Calls
 * resolve to { data, error, response }: data is the success body, error the
 * problem document of a 4xx or 5xx answer, and response.status tells a
 * created intent (201) from an idempotent repeat (200).
 */
export function createClient({ apiKey, ...options }: ClientOptions): SubmissionManagerClient {
  const client = createFetchClient<paths>(options);
  if (apiKey !== undefined) {
    const authorization = `Bearer ${apiKey}`;
    client.use({
      onRequest({ request }) {
        request.headers.set("Authorization", authorization);
        return request;
      },
    });
  }
  return client;
}
