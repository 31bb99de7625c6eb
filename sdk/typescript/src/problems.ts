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
export const problemTypeBase = "https://github.com/submissionmanager/submission-manager/blob/main/docs/api.md#";

/**
 * The documented kinds of error, one per section of docs/api.md's Errors
 * (a test holds this list and that document to agree).
 */
export const ProblemKinds = {
  MalformedRequest: "malformed-request",
  Unauthorized: "unauthorized",
  Forbidden: "forbidden",
  IntentNotEnded: "intent-not-ended",
  ResubmissionIdTaken: "resubmission-id-taken",
  DeliveryRisk: "delivery-risk",
  IntentEnded: "intent-ended",
  AttemptInFlight: "attempt-in-flight",
  IntentNotFound: "intent-not-found",
  TargetNotFound: "target-not-found",
  RouteNotFound: "route-not-found",
  MethodNotAllowed: "method-not-allowed",
  IdempotencyConflict: "idempotency-conflict",
  PayloadTooLarge: "payload-too-large",
  RequestTimeout: "request-timeout",
  UnsupportedMediaType: "unsupported-media-type",
  InvalidField: "invalid-field",
  UnknownSubmissionTarget: "unknown-submission-target",
  StoreUnavailable: "store-unavailable",
  NotAvailable: "not-available",
  ServerBusy: "server-busy",
  AuthenticationThrottled: "authentication-throttled",
  InternalError: "internal-error",
} as const;

/** One of the documented kinds of error. */
export type ProblemKind = (typeof ProblemKinds)[keyof typeof ProblemKinds];

/**
 * The kind of an answer that carried no problem document (a proxy's error
 * page, say): RFC 9457's "about:blank", whose meaning is the status alone.
 */
export const blankProblemKind = "about:blank";

/**
 * problemKind returns the kind of error a problem document names, such as
 * "idempotency-conflict" or "invalid-field" (the anchors of docs/api.md).
 */
export function problemKind(problem: Pick<Problem, "type">): string {
  return problem.type.startsWith(problemTypeBase) ? problem.type.slice(problemTypeBase.length) : problem.type;
}

/**
 * ProblemError is an error answer of the API. `kind` is a ProblemKind for
 * every documented error; a newer server may send kinds this client does
 * not list yet, and an answer without a problem document has the kind
 * "about:blank". `problem` is the document itself, with the members some
 * kinds add (conflictingFields, invalidFields, existingStatus ...).
 */
export class ProblemError extends Error {
  override readonly name = "ProblemError";
  /** The kind of error: the section of docs/api.md that explains it. */
  readonly kind: ProblemKind | (string & {});
  /** The HTTP status of the answer. */
  readonly status: number;

  constructor(readonly problem: Problem) {
    super(`${problem.status} ${problem.title}${problem.detail ? `: ${problem.detail}` : ""}`);
    this.kind = problemKind(problem);
    this.status = problem.status;
  }
}

/**
 * isProblem reports whether err is a ProblemError, and of the given kind
 * when one is named; it narrows `kind` for the code that follows.
 */
export function isProblem<K extends ProblemKind>(err: unknown, kind?: K): err is ProblemError & { kind: K } {
  return err instanceof ProblemError && (kind === undefined || err.kind === kind);
}

/**
 * problemOf turns a failed answer into a ProblemError: from its problem
 * document when it has one, else from its status alone ("about:blank").
 */
export function problemOf(error: unknown, response: Response): ProblemError {
  if (typeof error === "object" && error !== null && typeof (error as Problem).type === "string" &&
    typeof (error as Problem).title === "string") {
    return new ProblemError(error as Problem);
  }
  const detail = typeof error === "string" && error !== "" ? error.slice(0, 200) : undefined;
  return new ProblemError({
    type: blankProblemKind,
    title: response.statusText || `HTTP ${response.status}`,
    status: response.status,
    ...(detail === undefined ? {} : { detail }),
  });
}
