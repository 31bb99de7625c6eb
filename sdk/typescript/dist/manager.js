/**
 * SubmissionManager: the calls a client service makes, with answers as
 * values and error answers thrown as ProblemError. It is a thin layer over
 * the generated client (`api`), which stays available for everything else.
 */
import { createClient } from "./client.js";
import { problemOf } from "./problems.js";
/**
 * WaitTimeoutError is waitForFinal's answer when timeoutMs passed with the
 * intent still pending; `intent` is the last state read, if any.
 */
export class WaitTimeoutError extends Error {
    intentId;
    timeoutMs;
    intent;
    name = "WaitTimeoutError";
    constructor(intentId, timeoutMs, intent) {
        super(`intent ${JSON.stringify(intentId)} still pending after ${timeoutMs} ms`);
        this.intentId = intentId;
        this.timeoutMs = timeoutMs;
        this.intent = intent;
    }
}
/**
 * longestWaitSeconds bounds one `Prefer: wait` request. The service caps a
 * wait at its --max-wait (30 s by default) and then answers with the intent
 * as it stands; waitForFinal asks again until the intent is final.
 */
const longestWaitSeconds = 30;
/**
 * pauseWhenNotWaitedMs is how long waitForFinal pauses before asking again
 * when the service answered a pending intent without waiting (it holds as
 * many waiting requests as it takes, or less than a second was left to
 * wait), so that the service is never polled in a tight loop.
 */
const pauseWhenNotWaitedMs = 1_000;
/** The client of one SubmissionManager service. */
export class SubmissionManager {
    /** The generated client underneath, for the calls this class does not wrap. */
    api;
    constructor(options) {
        this.api = createClient(options);
    }
    /**
     * submit hands an intent over. It is idempotent: the same intentId with
     * the same target, payload and notBefore returns the existing intent
     * (created false); anything else under that id throws a ProblemError of
     * kind "idempotency-conflict". Retrying after a network error is safe.
     */
    async submit(request, options = {}) {
        const { data, error, response } = await this.api.POST("/v1/intents", { body: request, signal: options.signal });
        if (data === undefined)
            throw problemOf(error, response);
        return { intent: data, created: response.status === 201 };
    }
    /** get reads one intent; an unknown id throws kind "intent-not-found". */
    async get(intentId, options = {}) {
        const { data, error, response } = await this.api.GET("/v1/intents/{intentId}", {
            params: { path: { intentId } },
            signal: options.signal,
        });
        if (data === undefined)
            throw problemOf(error, response);
        return data;
    }
    /**
     * waitForFinal resolves with the intent once it is accepted, rejected or
     * exhausted. It waits on the service (`Prefer: wait`, answered as soon as
     * the intent is final, on whichever instance) instead of polling, asking
     * again each time the service's wait cap passes, and rejects with a
     * WaitTimeoutError after timeoutMs.
     */
    async waitForFinal(intentId, { timeoutMs = 60_000, signal } = {}) {
        const deadline = Date.now() + timeoutMs;
        let last;
        for (;;) {
            signal?.throwIfAborted();
            const remaining = deadline - Date.now();
            if (remaining <= 0)
                throw new WaitTimeoutError(intentId, timeoutMs, last);
            const timeout = AbortSignal.timeout(remaining);
            const bounded = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
            // Whole seconds, rounded down, so that the service answers with the
            // intent as it stands before the timeout; under a second, no wait.
            const seconds = Math.min(longestWaitSeconds, Math.floor(remaining / 1000));
            let answer;
            try {
                answer = await this.api.GET("/v1/intents/{intentId}", {
                    params: { path: { intentId }, header: seconds > 0 ? { Prefer: `wait=${seconds}` } : {} },
                    signal: bounded,
                });
            }
            catch (err) {
                if (timeout.aborted && !signal?.aborted)
                    throw new WaitTimeoutError(intentId, timeoutMs, last);
                throw err;
            }
            const { data, error, response } = answer;
            if (data === undefined)
                throw problemOf(error, response);
            last = data;
            if (data.status !== "pending")
                return data;
            if (!response.headers.has("Preference-Applied")) {
                const pause = Math.min(pauseWhenNotWaitedMs, deadline - Date.now());
                if (pause > 0)
                    await sleep(pause, signal);
            }
        }
    }
    /**
     * list yields the intents that match, newest first, fetching page after
     * page as the loop asks for more; break out of the loop to stop early.
     */
    async *list(options = {}) {
        const { pageSize, signal, createdFrom, createdBefore, ...filters } = options;
        const range = { createdFrom: instant(createdFrom), createdBefore: instant(createdBefore) };
        let cursor;
        do {
            const { data, error, response } = await this.api.GET("/v1/intents", {
                params: { query: { ...filters, ...range, ...(pageSize === undefined ? {} : { limit: pageSize }), cursor } },
                signal,
            });
            if (data === undefined)
                throw problemOf(error, response);
            yield* data.intents;
            cursor = data.nextCursor;
        } while (cursor !== undefined);
    }
}
/** instant writes a Date as the RFC 3339 text the API reads; text passes as given. */
function instant(t) {
    return t instanceof Date ? t.toISOString() : t;
}
/** sleep resolves after ms, or rejects when signal aborts first. */
function sleep(ms, signal) {
    return new Promise((resolve, reject) => {
        const onAbort = () => {
            clearTimeout(timer);
            reject(signal?.reason);
        };
        const timer = setTimeout(() => {
            signal?.removeEventListener("abort", onAbort);
            resolve();
        }, ms);
        signal?.addEventListener("abort", onAbort, { once: true });
    });
}
