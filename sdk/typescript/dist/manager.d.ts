/**
 * SubmissionManager: the calls a client service makes, with answers as
 * values and error answers thrown as ProblemError. It is a thin layer over
 * the generated client (`api`), which stays available for everything else.
 */
import { type ClientOptions, type Intent, type IntentStatus, type SubmissionManagerClient, type SubmitIntentRequest } from "./client.js";
/** What submit answers: the intent, and whether this call created it. */
export interface SubmitResult {
    intent: Intent;
    /** true for a new intent (201); false for an idempotent repeat (200). */
    created: boolean;
}
/** Options of waitForFinal. */
export interface WaitOptions {
    /** How long to wait in all, in milliseconds (default 60,000). */
    timeoutMs?: number;
    /** Stops the wait early; waitForFinal then rejects with the signal's reason. */
    signal?: AbortSignal;
}
/** Options of list: the filters of GET /v1/intents and the page size. */
export interface ListOptions {
    status?: IntentStatus;
    submissionTarget?: string;
    /** true lists only intents flagged possiblyAccepted. */
    possiblyAccepted?: boolean;
    /** true lists only intents the gateway accepted after their deadline (acceptedAfterDeadline). */
    acceptedAfterDeadline?: boolean;
    /** Only intents whose intentId starts with this text, exactly (case counts, no wildcards). */
    intentIdPrefix?: string;
    /** Only intents created at or after this instant (a Date, or RFC 3339 text). */
    createdFrom?: Date | string;
    /** Only intents created before this instant; later than createdFrom. */
    createdBefore?: Date | string;
    /** Only intents whose latest attempt has this text in its outcome or error, ignoring case. */
    lastResult?: string;
    /** Intents fetched per request, 1 to 500 (the service's default is 50). */
    pageSize?: number;
    signal?: AbortSignal;
}
/**
 * WaitTimeoutError is waitForFinal's answer when timeoutMs passed with the
 * intent still pending; `intent` is the last state read, if any.
 */
export declare class WaitTimeoutError extends Error {
    readonly intentId: string;
    readonly timeoutMs: number;
    readonly intent?: Intent | undefined;
    readonly name = "WaitTimeoutError";
    constructor(intentId: string, timeoutMs: number, intent?: Intent | undefined);
}
/** The client of one SubmissionManager service. */
export declare class SubmissionManager {
    /** The generated client underneath, for the calls this class does not wrap. */
    readonly api: SubmissionManagerClient;
    constructor(options: ClientOptions);
    /**
     * submit hands an intent over. It is idempotent: the same intentId with
     * the same target, payload and notBefore returns the existing intent
     * (created false); anything else under that id throws a ProblemError of
     * kind "idempotency-conflict". Retrying after a network error is safe.
     */
    submit(request: SubmitIntentRequest, options?: {
        signal?: AbortSignal;
    }): Promise<SubmitResult>;
    /** get reads one intent; an unknown id throws kind "intent-not-found". */
    get(intentId: string, options?: {
        signal?: AbortSignal;
    }): Promise<Intent>;
    /**
     * waitForFinal resolves with the intent once it is accepted, rejected or
     * exhausted. It waits on the service (`Prefer: wait`, answered as soon as
     * the intent is final, on whichever instance) instead of polling, asking
     * again each time the service's wait cap passes, and rejects with a
     * WaitTimeoutError after timeoutMs.
     */
    waitForFinal(intentId: string, { timeoutMs, signal }?: WaitOptions): Promise<Intent>;
    /**
     * list yields the intents that match, newest first, fetching page after
     * page as the loop asks for more; break out of the loop to stop early.
     */
    list(options?: ListOptions): AsyncGenerator<Intent, void, undefined>;
}
