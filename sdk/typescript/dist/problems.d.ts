/**
 * Error answers as typed errors. Every error answer of the API is an RFC
 * 9457 problem document whose `type` is stable per kind of error: the URL
 * of its section in docs/api.md. SubmissionManager throws each one as a
 * ProblemError whose `kind` is that section's name, so callers switch on a
 * typed string instead of parsing messages.
 */
import type { components } from "./schema.gen.js";
/** An RFC 9457 problem document: every error answer of the API. */
export type Problem = components["schemas"]["Problem"];
/** The start of every problem type; the rest names the kind of error. */
export declare const problemTypeBase = "https://github.com/submissionmanager/submission-manager/blob/main/docs/api.md#";
/**
 * The documented kinds of error, one per section of docs/api.md's Errors
 * (a test holds this list and that document to agree).
 */
export declare const ProblemKinds: {
    readonly MalformedRequest: "malformed-request";
    readonly Unauthorized: "unauthorized";
    readonly Forbidden: "forbidden";
    readonly IntentNotEnded: "intent-not-ended";
    readonly ResubmissionIdTaken: "resubmission-id-taken";
    readonly DeliveryRisk: "delivery-risk";
    readonly IntentEnded: "intent-ended";
    readonly AttemptInFlight: "attempt-in-flight";
    readonly IntentNotFound: "intent-not-found";
    readonly TargetNotFound: "target-not-found";
    readonly RouteNotFound: "route-not-found";
    readonly MethodNotAllowed: "method-not-allowed";
    readonly IdempotencyConflict: "idempotency-conflict";
    readonly PayloadTooLarge: "payload-too-large";
    readonly RequestTimeout: "request-timeout";
    readonly UnsupportedMediaType: "unsupported-media-type";
    readonly InvalidField: "invalid-field";
    readonly UnknownSubmissionTarget: "unknown-submission-target";
    readonly StoreUnavailable: "store-unavailable";
    readonly NotAvailable: "not-available";
    readonly ServerBusy: "server-busy";
    readonly AuthenticationThrottled: "authentication-throttled";
    readonly InternalError: "internal-error";
};
/** One of the documented kinds of error. */
export type ProblemKind = (typeof ProblemKinds)[keyof typeof ProblemKinds];
/**
 * The kind of an answer that carried no problem document (a proxy's error
 * page, say): RFC 9457's "about:blank", whose meaning is the status alone.
 */
export declare const blankProblemKind = "about:blank";
/**
 * problemKind returns the kind of error a problem document names, such as
 * "idempotency-conflict" or "invalid-field" (the anchors of docs/api.md).
 */
export declare function problemKind(problem: Pick<Problem, "type">): string;
/**
 * ProblemError is an error answer of the API. `kind` is a ProblemKind for
 * every documented error; a newer server may send kinds this client does
 * not list yet, and an answer without a problem document has the kind
 * "about:blank". `problem` is the document itself, with the members some
 * kinds add (conflictingFields, invalidFields, existingStatus ...).
 */
export declare class ProblemError extends Error {
    readonly problem: Problem;
    readonly name = "ProblemError";
    /** The kind of error: the section of docs/api.md that explains it. */
    readonly kind: ProblemKind | (string & {});
    /** The HTTP status of the answer. */
    readonly status: number;
    constructor(problem: Problem);
}
/**
 * isProblem reports whether err is a ProblemError, and of the given kind
 * when one is named; it narrows `kind` for the code that follows.
 */
export declare function isProblem<K extends ProblemKind>(err: unknown, kind?: K): err is ProblemError & {
    kind: K;
};
/**
 * problemOf turns a failed answer into a ProblemError: from its problem
 * document when it has one, else from its status alone ("about:blank").
 */
export declare function problemOf(error: unknown, response: Response): ProblemError;
