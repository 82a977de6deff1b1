// The errors of the Store contract, worded once: each store raises these for the same failures
// (SQLite from a transaction, Redis from a script's refusal), so callers see one message per case.
import { AfsError } from "../core/errors.js";
import type { CheckpointRecord } from "./store.js";

export const noWorkspace = (workspace: string): AfsError =>
  new AfsError("NOT_FOUND", `workspace ${workspace} does not exist`, { workspace });

export const workspaceExists = (workspace: string): AfsError =>
  new AfsError("ALREADY_EXISTS", `workspace ${workspace} already exists`, { workspace });

/** A lost compare-and-swap: the change was computed from `expected` (callers retry, core/retry.ts). */
export const revisionMoved = (workspace: string, expected: number | undefined, actual: number | null): AfsError =>
  new AfsError("CONFLICT", `workspace ${workspace} moved to revision ${actual} (expected ${expected})`, {
    workspace,
    expected,
    actual,
  });

export const checkpointIdTaken = (cp: Pick<CheckpointRecord, "id"> | null): AfsError =>
  new AfsError("ALREADY_EXISTS", `checkpoint id ${cp?.id} already exists`, { checkpoint: cp?.id });

export const checkpointNameTaken = (workspace: string, cp: Pick<CheckpointRecord, "name"> | null): AfsError =>
  new AfsError("ALREADY_EXISTS", `checkpoint ${cp?.name} already exists in ${workspace}; pick another name`, {
    workspace,
    checkpoint: cp?.name,
  });

export const noSuchHead = (workspace: string, head: string | undefined): AfsError =>
  new AfsError("NOT_FOUND", `checkpoint ${head} does not exist in workspace ${workspace}`, {
    workspace,
    checkpoint: head,
  });

export const deletingHead = (workspace: string, id: string): AfsError =>
  new AfsError("CONFLICT", `checkpoint ${id} is the head of workspace ${workspace}; move head first`, {
    workspace,
    checkpoint: id,
  });
