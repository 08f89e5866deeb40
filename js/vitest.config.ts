import { defineConfig } from "vitest/config";

export default defineConfig({
  // The repository's shared fixtures (tests/fixtures: saved notebooks) are read too.
  server: { fs: { allow: [".."] } },
  test: {
    environment: "jsdom",
    include: ["tests/**/*.test.ts"],
    globals: false,
    // Style sheets read as text by tests of their colours and sizes (others are stubbed empty).
    css: { include: [/src\/styles\/(agent|base|branches|highlight)\.css/] },
  },
});
