import { defineConfig } from "vitest/config";

export default defineConfig({
  // The repository's shared fixtures (tests/fixtures: saved notebooks) are read too.
  server: { fs: { allow: [".."] } },
  test: {
    environment: "jsdom",
    include: ["tests/**/*.test.ts"],
    globals: false,
    // The theme's style sheets are read as text by the test of their colors (others are stubbed empty).
    css: { include: [/src\/styles\/(agent|base)\.css/] },
  },
});
