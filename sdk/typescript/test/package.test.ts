/**
 * The package as another project gets it: packed with `npm pack` and
 * installed from the tarball, and installed from a copy of this directory
 * (npm links a directory and installs none of its dependencies), each into
 * a fresh project that compiles a TypeScript program against the installed
 * types and runs it against the real service. Both installs are offline:
 * the package has no runtime dependency to fetch.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { buildBinaries, startService, type Binaries, type Service } from "./service.js";

const run = promisify(execFile);

/** The SDK's directory, seen from .test-build/test/ where tsc puts this file. */
const sdkDir = fileURLToPath(new URL("../../", import.meta.url));
const tsc = join(sdkDir, "node_modules", "typescript", "bin", "tsc");

/** The consumer's program: what a client service would write. */
const program = `
import { createClient, isProblem, ProblemKinds, SubmissionManager } from "@submissionmanager/client";

declare const process: { env: Record<string, string | undefined> };
const baseUrl = process.env.SM_URL ?? "";
const id = process.env.SM_INTENT ?? "";

const sm = new SubmissionManager({ baseUrl });
const { intent, created } = await sm.submit({ intentId: id, submissionTarget: "sms.realtime", payload: { to: "+15550100", text: "hi" } });
const final = await sm.waitForFinal(intent.intentId, { timeoutMs: 20_000 });
let conflict = "";
try {
  await sm.submit({ intentId: id, submissionTarget: "sms.realtime", payload: { to: "+15550199", text: "hi" } });
} catch (err) {
  if (isProblem(err, ProblemKinds.IdempotencyConflict)) conflict = err.kind + ": " + (err.problem.conflictingFields ?? []).join(",");
}
const listed: string[] = [];
for await (const found of sm.list({ submissionTarget: "sms.realtime" })) listed.push(found.intentId);
const targets = await createClient({ baseUrl }).GET("/v1/targets");
console.log(JSON.stringify({ created, status: final.status, conflict, listed, targets: targets.data?.targets.map((t) => t.submissionTarget) }));
`;

/** consumer makes a fresh project in dir, installs spec offline, and compiles the program. */
async function consumer(dir: string, spec: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  await writeFile(join(dir, "main.ts"), program);
  await writeFile(join(dir, "tsconfig.json"), JSON.stringify({
    compilerOptions: { target: "ES2022", lib: ["ES2022", "DOM"], module: "NodeNext", moduleResolution: "NodeNext", strict: true, types: [] },
    files: ["main.ts"],
  }));
  await run("npm", ["install", "--offline", "--no-audit", "--no-fund", spec], { cwd: dir });
  await run(process.execPath, [tsc, "-p", dir]);
}

describe("the package installed in another project", () => {
  let bins: Binaries;
  let svc: Service;
  let work: string;
  before(async () => {
    bins = await buildBinaries();
    svc = await startService(bins);
    work = await mkdtemp(join(tmpdir(), "sm-sdk-ts-pack-"));
  });
  after(async () => {
    await svc?.stop();
    await bins?.cleanup();
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** runs the compiled program of the consumer in dir and returns what it printed. */
  async function runProgram(dir: string, intentId: string) {
    const { stdout } = await run(process.execPath, [join(dir, "main.js")], {
      cwd: dir,
      env: { ...process.env, SM_URL: svc.baseUrl, SM_INTENT: intentId },
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  test("from the npm pack tarball", async () => {
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", work], { cwd: sdkDir });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    assert.ok(packed);
    const shipped = packed.files.map((f) => f.path);
    for (const path of ["README.md", "package.json", "dist/index.js", "dist/index.d.ts", "vendor/openapi-fetch/index.js"]) {
      assert.ok(shipped.includes(path), `the tarball lacks ${path}: ${shipped.join(" ")}`);
    }
    assert.ok(!shipped.some((p) => p.startsWith("test/") || p.startsWith("src/")), `the tarball ships sources: ${shipped.join(" ")}`);

    const dir = join(work, "from-tarball");
    await consumer(dir, join(work, packed.filename));
    const out = await runProgram(dir, "tarball-1");
    assert.deepEqual({ ...out, listed: undefined }, {
      created: true,
      status: "accepted",
      conflict: "idempotency-conflict: payload",
      listed: undefined,
      targets: ["push.oneshot", "sms.batch", "sms.realtime"],
    });
    assert.ok((out.listed as string[]).includes("tarball-1"), JSON.stringify(out));
  });

  test("from a directory, without installing the SDK's own packages first", async () => {
    const copy = join(work, "sdk-checkout");
    await cp(sdkDir, copy, {
      recursive: true,
      filter: (src) => !/[/\\](node_modules|\.test-build)([/\\]|$)/.test(src.slice(sdkDir.length - 1)),
    });
    const dir = join(work, "from-directory");
    await consumer(dir, copy);
    const out = await runProgram(dir, "directory-1");
    assert.equal(out.created, true);
    assert.equal(out.status, "accepted");
    assert.equal(out.conflict, "idempotency-conflict: payload");
    assert.ok((out.listed as string[]).includes("directory-1"), JSON.stringify(out));
  });
});
