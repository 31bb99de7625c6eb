/**
 * The typed fetch client. The types in schema.gen.ts are generated from
 * api/openapi.yaml by openapi-typescript (`make generate`); openapi-fetch
 * (vendored in vendor/, so the package has no runtime dependency) turns
 * them into a typed fetch client. This file only names the schemas and
 * adds the API key, so every call stays exactly what the contract says.
 */
import createFetchClient from "../vendor/openapi-fetch/index.js";
/**
 * createClient returns a typed client for the service at baseUrl. Calls
 * resolve to { data, error, response }: data is the success body, error the
 * problem document of a 4xx or 5xx answer, and response.status tells a
 * created intent (201) from an idempotent repeat (200).
 */
export function createClient({ apiKey, ...options }) {
    const client = createFetchClient(options);
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
