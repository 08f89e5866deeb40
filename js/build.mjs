// Bundles the front end into the Python package: src/index.ts -> ../ai_widgets/static/widget.js (ES module)
// and src/styles.css -> ../ai_widgets/static/widget.css. The Python side loads them as _esm and _css.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import { dirname, resolve } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = resolve(here, "../ai_widgets/static");

await Promise.all([
  build({
    entryPoints: [resolve(here, "src/index.ts")],
    outfile: resolve(outdir, "widget.js"),
    bundle: true,
    format: "esm",
    target: "es2020",
    minify: true,
    sourcemap: false,
    legalComments: "none",
    logLevel: "info",
  }),
  build({
    entryPoints: [resolve(here, "src/styles.css")],
    outfile: resolve(outdir, "widget.css"),
    bundle: true,
    minify: true,
    // Browsers of JupyterLab 4 / Notebook 7 / VS Code; nested rules are flattened to `.aiw .x` selectors.
    target: ["chrome105", "firefox110", "safari15"],
    logLevel: "info",
  }),
]);
