import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Every CLI process a test starts does its own work; test/cli/resident.test.ts turns the
    // resident afs on, with a socket directory of its own.
    env: { AFS_DAEMON: "off" },
  },
});
