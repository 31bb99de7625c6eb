/**
 * The TypeScript client of the SubmissionManager API.
 *
 * SubmissionManager (manager.ts) is the client most code wants: submit,
 * get, waitForFinal and list, with every error answer thrown as a
 * ProblemError typed by its kind (problems.ts). createClient (client.ts) is
 * the typed fetch client underneath, generated from api/openapi.yaml, for
 * any call the class does not cover.
 */
export * from "./client.js";
export * from "./problems.js";
export * from "./manager.js";
