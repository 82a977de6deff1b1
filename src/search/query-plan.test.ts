import { describe, expect, it } from "vitest";
import { parseQueryDocument, planQuery } from "./query-plan.js";

describe("parseQueryDocument", () => {
  it("reads one typed clause per line, or says the text is plain", () => {
    expect(parseQueryDocument("where is the retry backoff")).toBeNull();
    expect(parseQueryDocument("error: connection refused")).toBeNull();
    expect(
      parseQueryDocument(
        "lex: retry backoff\n\nVEC:  how are failed requests retried? \nhyde: We wait 2^n ms.\nintent: fix a bug",
      ),
    ).toEqual({
      searches: [
        { type: "lex", query: "retry backoff" },
        { type: "vec", query: "how are failed requests retried?" },
        { type: "hyde", query: "We wait 2^n ms." },
      ],
      intent: ["fix a bug"],
    });
  });

  it("refuses a document that mixes typed and plain lines, or has an empty clause", () => {
    expect(() => parseQueryDocument("lex: retry\nplain words")).toThrow(
      /mixes typed clauses with the plain line "plain words"/,
    );
    expect(() => parseQueryDocument("vec:")).toThrow(/the vec: clause is empty/);
  });
});

describe("planQuery", () => {
  it("turns plain text into lex and/or vec by mode", () => {
    expect(planQuery({ query: "retry", mode: "query" }).searches).toEqual([
      { type: "lex", query: "retry" },
      { type: "vec", query: "retry" },
    ]);
    expect(planQuery({ query: "retry", mode: "keyword" }).searches).toEqual([{ type: "lex", query: "retry" }]);
    expect(planQuery({ query: "retry", mode: "semantic" }).searches).toEqual([{ type: "vec", query: "retry" }]);
  });

  it("adds searches and intent, and leaves out what the mode does not run, saying so", () => {
    const plan = planQuery({
      query: "lex: retry\nintent: debugging",
      searches: [{ type: "hyde", query: "we retry with backoff" }],
      intent: "flaky tests",
      mode: "keyword",
    });
    expect(plan).toEqual({
      searches: [{ type: "lex", query: "retry" }],
      intent: "flaky tests debugging",
      warnings: ["mode keyword runs lex searches only; left out: hyde"],
    });
    expect(planQuery({ searches: [{ type: "vec", query: "x" }], mode: "query" }).searches).toEqual([
      { type: "vec", query: "x" },
    ]);
  });

  it("refuses a call with nothing to search for", () => {
    expect(() => planQuery({ mode: "query" })).toThrow(/give query/);
    expect(() => planQuery({ query: "intent: only this", mode: "query" })).toThrow(/intent alone is not a search/);
    expect(() => planQuery({ query: "vec: x", mode: "keyword" })).toThrow(
      /mode keyword runs lex searches, and this query has only vec/,
    );
  });
});
