// The lists each side of docs/protocol.md writes once must agree: scripts/test.sh regenerates protocol.json (and
// trace.json) from the Python serialiser before these tests run.
import { describe, expect, it } from "vitest";
import { AFTER_STOP_FIELDS, CALL_FIELDS, MESSAGE_FIELDS } from "../src/live";
import { OP_LENGTHS, asPatchOp } from "../src/normalize";
import { kernelFixture } from "./fixtures/load";

const protocol = kernelFixture<{
  call_fields: string[];
  after_stop_fields: string[];
  message_fields: string[];
  wire_order: Record<string, string[]>;
}>("protocol.json");

describe("the protocol's field lists, front end against kernel", () => {
  it("carries the same call and message fields", () => {
    expect([...CALL_FIELDS]).toEqual(protocol.call_fields);
    expect([...AFTER_STOP_FIELDS]).toEqual(protocol.after_stop_fields);
    expect([...MESSAGE_FIELDS]).toEqual(protocol.message_fields);
  });

  it("knows every op the kernel sends, with its length", () => {
    const kernel = Object.fromEntries(Object.entries(protocol.wire_order).map(([op, fields]) => [op, fields.length + 1]));
    expect(OP_LENGTHS).toEqual(kernel);
  });

  it("refuses an op of the wrong shape", () => {
    expect(asPatchOp(["text", "m1", 0, "hi"])).not.toBeNull();
    expect(asPatchOp(["text", "m1", "0", "hi"])).toBeNull();
    expect(asPatchOp(["text", "m1", 0])).toBeNull();
    expect(asPatchOp(["finish", "x", {}])).toBeNull();
    expect(asPatchOp(["nope"])).toBeNull();
    expect(asPatchOp({ op: "clear" })).toBeNull();
    expect(asPatchOp(["clear"])).toEqual(["clear"]);
  });
});
