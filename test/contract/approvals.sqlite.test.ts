// The approval part of the Store contract (and the queue over it) on SQLite.
import { describe } from "vitest";
import { approvalStoreContract } from "./approval-store-contract.js";
import { sqliteFactory, storeEnabled } from "./stores.js";

describe.runIf(storeEnabled("sqlite"))("sqlite", () => {
  approvalStoreContract("sqlite", sqliteFactory);
});
