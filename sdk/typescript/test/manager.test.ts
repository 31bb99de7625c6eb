/**
 * SubmissionManager against the real service (service.ts), and its error
 * and wait handling against a scripted HTTP server where the real service
 * cannot be made to answer that way.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  isProblem,
  ProblemError,
  ProblemKinds,
  SubmissionManager,
  WaitTimeoutError,
  type Intent,
} from "@submissionmanager/client";
import { buildBinaries, startService, type Binaries, type Service } from "./service.js";

const order = { to: "+15551234567", text: "Your order has shipped." };

/** rejection returns what a promise rejected with, failing if it resolved. */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  assert.fail("the call resolved; want a rejection");
}

describe("SubmissionManager against the service", () => {
  let bins: Binaries;
  let svc: Service;
  let sm: SubmissionManager;
  before(async () => {
    bins = await buildBinaries();
    svc = await startService(bins);
    sm = new SubmissionManager({ baseUrl: svc.baseUrl });
  });
  after(async () => {
    await svc?.stop();
    await bins?.cleanup();
  });

  test("submit tells a created intent from a repeat", async () => {
    const request = { intentId: "m-1", submissionTarget: "sms.realtime", payload: order };
    const first = await sm.submit(request);
    assert.equal(first.created, true);
    assert.equal(first.intent.intentId, "m-1");
    const again = await sm.submit({ ...request, payload: { text: order.text, to: order.to } });
    assert.equal(again.created, false);
    assert.equal(again.intent.createdAt, first.intent.createdAt);
  });

  test("a conflicting repeat throws a ProblemError of its kind", async () => {
    await sm.submit({ intentId: "m-2", submissionTarget: "sms.realtime", payload: order });
    const err = await rejection(sm.submit({ intentId: "m-2", submissionTarget: "sms.batch", payload: order }));
    assert.ok(err instanceof ProblemError, String(err));
    assert.ok(isProblem(err, ProblemKinds.IdempotencyConflict));
    assert.equal(err.status, 409);
    assert.deepEqual(err.problem.conflictingFields, ["submissionTarget"]);
    assert.equal(isProblem(err, ProblemKinds.InvalidField), false);

    const missing = await rejection(sm.get("never-submitted"));
    assert.ok(isProblem(missing, "intent-not-found"), String(missing));
    const unknown = await rejection(sm.submit({ intentId: "m-3", submissionTarget: "fax.realtime", payload: order }));
    assert.ok(isProblem(unknown, "unknown-submission-target"), String(unknown));
    assert.deepEqual(unknown.problem.invalidFields?.map((f) => f.field), ["submissionTarget"]);
  });

  test("waitForFinal answers once the gateway accepted a scheduled intent", async () => {
    const notBefore = new Date(Date.now() + 1_500).toISOString();
    const { intent } = await sm.submit({ intentId: "m-4", submissionTarget: "sms.realtime", payload: order, notBefore });
    assert.equal(intent.status, "pending");
    const final = await sm.waitForFinal("m-4", { timeoutMs: 20_000 });
    assert.equal(final.status, "accepted");
    assert.equal(final.attempts.length, 1);
  });

  test("waitForFinal gives up after timeoutMs, with the intent as it stood", async () => {
    const notBefore = new Date(Date.now() + 3_600_000).toISOString();
    await sm.submit({ intentId: "m-5", submissionTarget: "sms.realtime", payload: order, notBefore });
    const err = await rejection(sm.waitForFinal("m-5", { timeoutMs: 1_200 }));
    assert.ok(err instanceof WaitTimeoutError, String(err));
    assert.equal(err.intentId, "m-5");
    assert.equal(err.intent?.status, "pending");

    const stop = new AbortController();
    const waiting = sm.waitForFinal("m-5", { timeoutMs: 60_000, signal: stop.signal });
    stop.abort(new Error("caller stopped"));
    assert.equal((await rejection(waiting) as Error).message, "caller stopped");
  });

  test("list pages through every match; breaking out stops it", async () => {
    const ids = ["l-1", "l-2", "l-3", "l-4", "l-5"];
    for (const intentId of ids) await sm.submit({ intentId, submissionTarget: "push.oneshot", payload: { token: intentId } });
    for (const intentId of ids) await sm.waitForFinal(intentId, { timeoutMs: 20_000 });

    const seen: string[] = [];
    for await (const intent of sm.list({ submissionTarget: "push.oneshot", status: "accepted", pageSize: 2 })) {
      seen.push(intent.intentId);
    }
    assert.deepEqual(seen, [...ids].reverse());

    const firstTwo: Intent[] = [];
    for await (const intent of sm.list({ submissionTarget: "push.oneshot", pageSize: 2 })) {
      firstTwo.push(intent);
      if (firstTwo.length === 2) break;
    }
    assert.deepEqual(firstTwo.map((i) => i.intentId), ["l-5", "l-4"]);

    const bad = await rejection(sm.list({ pageSize: 0 }).next());
    assert.ok(isProblem(bad, "invalid-field"), String(bad));
  });

  test("list searches by intentId prefix, creation range and latest outcome", async () => {
    const start = new Date();
    for (const intentId of ["s-otp-1", "s-order-1", "s-otp-2"]) {
      await sm.submit({ intentId, submissionTarget: "push.oneshot", payload: { token: intentId } });
      await sm.waitForFinal(intentId, { timeoutMs: 20_000 });
    }
    const found = async (options: Parameters<SubmissionManager["list"]>[0]) => {
      const ids: string[] = [];
      for await (const intent of sm.list({ ...options, pageSize: 1 })) ids.push(intent.intentId);
      return ids;
    };
    assert.deepEqual(await found({ intentIdPrefix: "s-otp-" }), ["s-otp-2", "s-otp-1"]);
    assert.deepEqual(await found({ intentIdPrefix: "s-", createdFrom: start, lastResult: "ACCEPTED" }), ["s-otp-2", "s-order-1", "s-otp-1"]);
    assert.deepEqual(await found({ intentIdPrefix: "s-", createdBefore: start }), []);
    const reversed = await rejection(sm.list({ createdFrom: start, createdBefore: start }).next());
    assert.ok(isProblem(reversed, "invalid-field"), String(reversed));
    assert.equal((reversed as ProblemError).problem.invalidFields?.[0]?.field, "createdBefore");
  });
});

/** A server whose answers a test scripts, recording the requests. */
async function scripted(answer: (req: IncomingMessage, res: ServerResponse, n: number) => void) {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    answer(req, res, seen.length);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const pending = { intentId: "s-1", submissionTarget: "sms.realtime", status: "pending", createdAt: "2026-02-02T12:00:00Z", attempts: [],
  contract: { submissionTarget: "sms.realtime", gatewayType: "sms", mode: "realtime", policy: "one_shot", terminalOutcomes: [] } };

describe("SubmissionManager against a scripted server", () => {
  test("an answer without a problem document is a ProblemError about:blank", async () => {
    const srv = await scripted((_req, res) => {
      res.writeHead(502, { "Content-Type": "text/html" }).end("<html>Bad Gateway</html>");
    });
    try {
      const err = await rejection(new SubmissionManager({ baseUrl: srv.baseUrl }).get("s-1"));
      assert.ok(err instanceof ProblemError, String(err));
      assert.equal(err.kind, "about:blank");
      assert.equal(err.status, 502);
      assert.equal(err.problem.detail, "<html>Bad Gateway</html>");
    } finally {
      await srv.close();
    }
  });

  test("waitForFinal asks again after an answer the server did not wait for", async () => {
    const srv = await scripted((_req, res, n) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(n === 1 ? pending : { ...pending, status: "accepted", finalOutcome: { status: "accepted" } }));
    });
    try {
      const final = await new SubmissionManager({ baseUrl: srv.baseUrl, apiKey: "k" }).waitForFinal("s-1", { timeoutMs: 5_500 });
      assert.equal(final.status, "accepted");
      assert.equal(srv.seen.length, 2);
      assert.equal(srv.seen[0]?.headers.prefer, "wait=5", "the first wait asks for the whole timeout, in whole seconds rounded down");
      assert.equal(srv.seen[0]?.headers.authorization, "Bearer k");
      assert.equal(srv.seen[0]?.url, "/v1/intents/s-1");
    } finally {
      await srv.close();
    }
  });
});

test("ProblemKinds lists exactly the errors docs/api.md documents", async () => {
  const doc = await readFile(fileURLToPath(new URL("../../../../docs/api.md", import.meta.url)), "utf8");
  const errors = doc.slice(doc.indexOf("\n## Errors\n"), doc.indexOf("\n## ", doc.indexOf("\n## Errors\n") + 1));
  const documented = [...errors.matchAll(/^### ([a-z-]+)$/gm)].map((m) => m[1]).sort();
  assert.ok(documented.length > 10, `found only ${documented.length} error sections`);
  assert.deepEqual(Object.values(ProblemKinds).sort(), documented);
});
