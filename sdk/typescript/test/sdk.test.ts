/**
 * The SDK against the real service: every call goes through createClient
 * to submission-manager and gateway-sim processes built from this
 * repository (see service.ts).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createClient, problemKind, SubmissionManager, type Problem, type SubmissionManagerClient } from "@submissionmanager/client";
import { buildBinaries, startService, type Binaries, type Service } from "./service.js";

const order = { to: "+15551234567", text: "Your order has shipped." };

/** terminalWait bounds a wait for an intent to leave pending. */
const terminalWait = { timeoutMs: 20_000 };

/** assertProblem checks an error answer's status, media type and kind. */
function assertProblem(res: { error?: Problem; response: Response }, status: number, kind: string): Problem {
  assert.equal(res.response.status, status, JSON.stringify(res.error));
  assert.equal(res.response.headers.get("Content-Type"), "application/problem+json");
  assert.ok(res.error);
  assert.equal(res.error.status, status);
  assert.equal(problemKind(res.error), kind);
  return res.error;
}

let bins: Binaries;
before(async () => {
  bins = await buildBinaries();
});
after(async () => {
  await bins?.cleanup();
});

describe("a service without API keys", () => {
  let svc: Service;
  let client: SubmissionManagerClient;
  let manager: SubmissionManager;
  before(async () => {
    svc = await startService(bins);
    client = createClient({ baseUrl: svc.baseUrl });
    manager = new SubmissionManager({ baseUrl: svc.baseUrl });
  });
  after(async () => {
    await svc?.stop();
  });

  test("submit creates the intent (201) and a repeat returns it (200)", async () => {
    const body = { intentId: "order-1", submissionTarget: "sms.realtime", payload: order };
    const created = await client.POST("/v1/intents", { body });
    assert.equal(created.response.status, 201, JSON.stringify(created.error));
    assert.ok(created.data);
    assert.equal(created.data.intentId, "order-1");
    assert.equal(created.data.status, "pending");
    assert.deepEqual(created.data.contract, {
      submissionTarget: "sms.realtime",
      gatewayType: "sms",
      mode: "realtime",
      policy: "deadline",
      maxAcceptanceSeconds: 30,
      terminalOutcomes: ["invalid_request", "invalid_recipient", "invalid_message"],
    });

    const repeat = await client.POST("/v1/intents", { body });
    assert.equal(repeat.response.status, 200, JSON.stringify(repeat.error));
    assert.equal(repeat.data?.intentId, "order-1");
    assert.equal(repeat.data?.createdAt, created.data.createdAt);
  });

  test("Prefer: wait answers with the final intent; a key-order repeat is the same intent", async () => {
    const notBefore = new Date(Date.now() + 500).toISOString();
    const body = { intentId: "order-wait", submissionTarget: "sms.realtime", payload: order, notBefore };
    const waited = await client.POST("/v1/intents", { body, params: { header: { Prefer: "wait=20" } } });
    assert.equal(waited.response.status, 201, JSON.stringify(waited.error));
    assert.equal(waited.response.headers.get("Preference-Applied"), "wait=20");
    assert.equal(waited.data?.status, "accepted");
    assert.equal(Date.parse(waited.data?.notBefore ?? ""), Date.parse(notBefore)); // the same instant, however spelled

    const reordered = { text: order.text, to: order.to };
    const repeat = await client.POST("/v1/intents", { body: { ...body, payload: reordered } });
    assert.equal(repeat.response.status, 200, JSON.stringify(repeat.error));
    assert.deepEqual(repeat.data?.attempts, waited.data?.attempts);

    const read = await client.GET("/v1/intents/{intentId}", {
      params: { path: { intentId: "order-wait" }, header: { Prefer: "wait=5" } },
    });
    assert.equal(read.response.headers.get("Preference-Applied"), "wait=5");
    assert.equal(read.data?.status, "accepted");
  });

  test("a repeat with another payload is a 409 naming the field", async () => {
    const first = await client.POST("/v1/intents", { body: { intentId: "order-2", submissionTarget: "sms.realtime", payload: order } });
    assert.equal(first.response.status, 201);
    const res = await client.POST("/v1/intents", {
      body: { intentId: "order-2", submissionTarget: "sms.realtime", payload: { ...order, to: "+15550000000" } },
    });
    const p = assertProblem(res, 409, "idempotency-conflict");
    assert.equal(p.intentId, "order-2");
    assert.deepEqual(p.conflictingFields, ["payload"]);
    assert.ok(p.existingStatus);
  });

  test("get reads the intent until the gateway accepted it", async () => {
    // The SDK percent-encodes the intentId in the path.
    const intentId = "order/3 ü";
    const created = await client.POST("/v1/intents", { body: { intentId, submissionTarget: "sms.realtime", payload: null } });
    assert.equal(created.response.status, 201, JSON.stringify(created.error));
    const done = await manager.waitForFinal(intentId, terminalWait);
    assert.equal(done.intentId, intentId);
    assert.equal(done.status, "accepted");
    assert.deepEqual(done.finalOutcome, { status: "accepted" });
    assert.equal(done.attempts.length, 1);
    assert.equal(done.attempts[0]?.number, 1);

    const missing = await client.GET("/v1/intents/{intentId}", { params: { path: { intentId: "never-submitted" } } });
    assertProblem(missing, 404, "intent-not-found");
  });

  test("list filters by target and status and pages with the cursor", async () => {
    const ids = ["list-1", "list-2", "list-3", "list-4", "list-5"];
    for (const intentId of ids) {
      const res = await client.POST("/v1/intents", { body: { intentId, submissionTarget: "push.oneshot", payload: { token: intentId } } });
      assert.equal(res.response.status, 201, JSON.stringify(res.error));
    }
    for (const intentId of ids) await manager.waitForFinal(intentId, terminalWait);

    const seen: string[] = [];
    const pages: number[] = [];
    let cursor: string | undefined;
    do {
      const { data, error } = await client.GET("/v1/intents", {
        params: { query: { submissionTarget: "push.oneshot", status: "accepted", limit: 2, cursor } },
      });
      assert.ok(data, JSON.stringify(error));
      pages.push(data.intents.length);
      seen.push(...data.intents.map((i) => i.intentId));
      cursor = data.nextCursor;
    } while (cursor !== undefined);
    assert.deepEqual(pages, [2, 2, 1]);
    assert.deepEqual(seen, [...ids].reverse(), "newest first");

    const rejected = await client.GET("/v1/intents", { params: { query: { submissionTarget: "push.oneshot", status: "rejected" } } });
    assert.deepEqual(rejected.data, { intents: [] });

    const bad = await client.GET("/v1/intents", { params: { query: { limit: 0 } } });
    const p = assertProblem(bad, 422, "invalid-field");
    assert.deepEqual(p.invalidFields?.map((f) => f.field), ["limit"]);
  });

  test("bad submissions are problems that name the field", async () => {
    const unknown = await client.POST("/v1/intents", { body: { intentId: "order-4", submissionTarget: "fax.realtime", payload: order } });
    const p = assertProblem(unknown, 422, "unknown-submission-target");
    assert.deepEqual(p.invalidFields?.map((f) => f.field), ["submissionTarget"]);

    const long = await client.POST("/v1/intents", { body: { intentId: "x".repeat(256), submissionTarget: "sms.realtime", payload: order } });
    const q = assertProblem(long, 422, "invalid-field");
    assert.deepEqual(q.invalidFields?.map((f) => f.field), ["intentId"]);
  });

  test("a batch answers every item as a single submit would, in order", async () => {
    await client.POST("/v1/intents", { body: { intentId: "batch-0", submissionTarget: "sms.realtime", payload: order } });
    const res = await client.POST("/v1/intents/batch", {
      body: {
        intents: [
          { intentId: "batch-1", submissionTarget: "sms.realtime", payload: order },
          { intentId: "batch-0", submissionTarget: "sms.realtime", payload: order },
          { intentId: "batch-0", submissionTarget: "sms.realtime", payload: { other: true } },
          { intentId: "batch-2", submissionTarget: "no.such.target", payload: order },
        ],
      },
    });
    assert.equal(res.response.status, 200, JSON.stringify(res.error));
    assert.ok(res.data);
    const results = res.data.results;
    assert.deepEqual(results.map((r) => r.status), [201, 200, 409, 422]);
    const [created, repeat, conflict, unknown] = results;
    assert.ok(created && repeat && conflict?.problem && unknown?.problem);
    assert.equal(created.intent?.intentId, "batch-1");
    assert.equal(repeat.intent?.intentId, "batch-0");
    assert.equal(problemKind(conflict.problem), "idempotency-conflict");
    assert.equal(problemKind(unknown.problem), "unknown-submission-target");
    assert.equal((await manager.waitForFinal("batch-1", terminalWait)).status, "accepted");

    const empty = await client.POST("/v1/intents/batch", { body: { intents: [] } });
    assertProblem(empty, 422, "invalid-field");
  });

  test("targets list every contract", async () => {
    const { data, error } = await client.GET("/v1/targets");
    assert.ok(data, JSON.stringify(error));
    assert.deepEqual(
      data.targets.map((t) => t.submissionTarget),
      ["push.oneshot", "sms.batch", "sms.realtime"],
    );
  });
});

describe("a service with API keys", () => {
  let svc: Service;
  before(async () => {
    svc = await startService(bins, ["key-one", "key-two"]);
  });
  after(async () => {
    await svc?.stop();
  });

  test("the client's apiKey opens /v1; a missing or wrong key is a 401", async () => {
    const body = { intentId: "auth-1", submissionTarget: "sms.realtime", payload: order };
    for (const apiKey of [undefined, "key-three"]) {
      const res = await createClient({ baseUrl: svc.baseUrl, apiKey }).POST("/v1/intents", { body });
      assertProblem(res, 401, "unauthorized");
    }
    const client = createClient({ baseUrl: svc.baseUrl, apiKey: "key-two" });
    const created = await client.POST("/v1/intents", { body });
    assert.equal(created.response.status, 201, JSON.stringify(created.error));
    const read = await client.GET("/v1/intents/{intentId}", { params: { path: { intentId: "auth-1" } } });
    assert.equal(read.data?.intentId, "auth-1");
  });

  test("health endpoints need no key", async () => {
    const client = createClient({ baseUrl: svc.baseUrl });
    const { data, response } = await client.GET("/healthz", { parseAs: "text" });
    assert.equal(response.status, 200);
    assert.equal(data, "ok");
  });
});
