// Copies openapi-fetch, at the version package-lock.json pins, from
// node_modules into vendor/, so that the package has no runtime
// dependency: `npm install /path/to/sdk/typescript` links this directory
// without installing its dependencies, and a link only works when every
// import resolves from here. openapi-typescript-helpers contributes types
// only. `npm run build` (and so `make generate`) runs this; `make verify`
// fails when the committed copy differs.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const modules = join(root, "node_modules");
const vendor = join(root, "vendor");

/** Each file to copy: from node_modules, to vendor/, and how to rewrite it. */
const files = [
  ["openapi-fetch/dist/index.mjs", "openapi-fetch/index.js", dropSourceMap],
  ["openapi-fetch/dist/index.d.mts", "openapi-fetch/index.d.ts", (s) =>
    s.replaceAll("from 'openapi-typescript-helpers'", "from '../openapi-typescript-helpers/index.js'")],
  ["openapi-fetch/LICENSE", "openapi-fetch/LICENSE", (s) => s],
  ["openapi-typescript-helpers/dist/index.d.mts", "openapi-typescript-helpers/index.d.ts", (s) => s],
  ["openapi-typescript-helpers/LICENSE", "openapi-typescript-helpers/LICENSE", (s) => s],
];

/** dropSourceMap removes the link to a source map that is not copied. */
function dropSourceMap(s) {
  return s.replace(/\n\/\/# sourceMappingURL=.*\n?$/, "\n");
}

for (const [from, to, rewrite] of files) {
  const text = await readFile(join(modules, from), "utf8");
  const out = rewrite(text);
  if (from.endsWith(".d.mts") && out.includes("from 'openapi-typescript-helpers'")) {
    throw new Error(`${from}: an import of openapi-typescript-helpers was left unrewritten`);
  }
  await mkdir(dirname(join(vendor, to)), { recursive: true });
  await writeFile(join(vendor, to), out);
}

const versions = {};
for (const name of ["openapi-fetch", "openapi-typescript-helpers"]) {
  versions[name] = JSON.parse(await readFile(join(modules, name, "package.json"), "utf8")).version;
}
await writeFile(
  join(vendor, "README.md"),
  `# vendor

Copies of ${Object.entries(versions).map(([n, v]) => `\`${n}\` ${v}`).join(" and ")} (MIT, see each
LICENSE), written by \`scripts/vendor.mjs\` from the versions \`package-lock.json\` pins. They
make the package free of runtime dependencies, so that installing it from a directory (a
link, whose own dependencies npm does not install) works as well as from a tarball. Do not
edit them: change the pinned version and run \`npm run build\` (\`make generate\`).
`,
);
