/**
 * The real service for the SDK's tests: the submission-manager and
 * gateway-sim binaries built from this repository and started as processes
 * on free loopback ports, on a fresh SQLite file. Nothing is mocked.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/** The repository root, seen from sdk/typescript/.test-build/test/ where tsc puts this file. */
const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

/** A started process, the log lines it wrote so far, and how to stop it. */
interface Proc {
  child: ChildProcess;
  logs: string[];
  stop(): Promise<void>;
}

/**
 * start spawns a binary that logs JSON lines to stderr and resolves with
 * the first values pick returns for a line; it rejects, with the logs, if
 * the process exits first. The rest of stderr keeps being read, so the
 * process never blocks on a full pipe.
 */
function start<T>(
  bin: string,
  args: string[],
  pick: (entry: Record<string, unknown>) => T | undefined,
  want: number,
): Promise<{ proc: Proc; found: T[] }> {
  const child = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] });
  const logs: string[] = [];
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const proc: Proc = {
    child,
    logs,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
  return new Promise((resolve, reject) => {
    const found: T[] = [];
    child.once("error", reject);
    child.once("exit", (code, signal) =>
      reject(new Error(`${bin} exited (${code ?? signal}) before it was ready:\n${logs.join("\n")}`)),
    );
    createInterface({ input: child.stderr! }).on("line", (line) => {
      logs.push(line);
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      const value = pick(entry);
      if (value !== undefined && found.length < want) {
        found.push(value);
        if (found.length === want) resolve({ proc, found });
      }
    });
  });
}

/** Binaries built once per test process into a temporary directory. */
export interface Binaries {
  dir: string;
  cleanup(): Promise<void>;
}

/** buildBinaries compiles the service and the gateway simulator. */
export async function buildBinaries(): Promise<Binaries> {
  const dir = await mkdtemp(join(tmpdir(), "sm-sdk-ts-"));
  await promisify(execFile)("go", ["build", "-o", dir + "/", "./cmd/submission-manager", "./cmd/gateway-sim"], {
    cwd: repoRoot,
  });
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A running simulator and service, and the way to stop both. */
export interface Service {
  baseUrl: string;
  stop(): Promise<void>;
}

/** The targets every test service has: one per policy. */
function registry(sms: string, push: string) {
  const smsTerminal = ["invalid_request", "invalid_recipient", "invalid_message"];
  const pushTerminal = ["invalid_request", "unregistered_token"];
  return {
    targets: [
      {
        submissionTarget: "sms.realtime", gatewayType: "sms", gatewayUrl: sms,
        mode: "realtime", policy: "deadline", maxAcceptanceSeconds: 30, terminalOutcomes: smsTerminal,
      },
      {
        submissionTarget: "sms.batch", gatewayType: "sms", gatewayUrl: sms,
        mode: "batch", policy: "max_attempts", maxAttempts: 3, terminalOutcomes: smsTerminal,
      },
      {
        submissionTarget: "push.oneshot", gatewayType: "push", gatewayUrl: push,
        mode: "batch", policy: "one_shot", terminalOutcomes: pushTerminal,
      },
    ],
  };
}

/**
 * startService starts gateway-sim and submission-manager serve (on its own
 * SQLite file, with apiKeys when given) and resolves once the service
 * serves HTTP.
 */
export async function startService(bins: Binaries, apiKeys: string[] = []): Promise<Service> {
  const dir = await mkdtemp(join(tmpdir(), "sm-sdk-ts-run-"));
  const procs: Proc[] = [];
  const stop = async () => {
    for (const p of procs.reverse()) await p.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const sim = await start<[string, string]>(
      join(bins.dir, "gateway-sim"),
      ["--sms-listen", "127.0.0.1:0", "--push-listen", "127.0.0.1:0", "--log-format", "json"],
      (e) => (e.msg === "gateway simulator listening" ? [String(e.gateway_type), String(e.url)] : undefined),
      2,
    );
    procs.push(sim.proc);
    const urls = Object.fromEntries(sim.found);
    const targets = join(dir, "targets.json");
    await writeFile(targets, JSON.stringify(registry(urls.sms!, urls.push!)));
    const args = ["serve", "--database", `sqlite:${join(dir, "sm.db")}`, "--listen", "127.0.0.1:0"];
    args.push("--registry", targets, "--retry-delay", "50ms", "--log-format", "json");
    if (apiKeys.length > 0) args.push("--api-keys", apiKeys.join(","));
    const sm = await start<string>(
      join(bins.dir, "submission-manager"),
      args,
      (e) => (e.msg === "submission-manager serving" ? String(e.url) : undefined),
      1,
    );
    procs.push(sm.proc);
    return { baseUrl: sm.found[0]!, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
