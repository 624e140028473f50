import { describe, expect, it } from "vitest";
import { autoTag, FALLBACK_TAG } from "../../../readmodels/modules/conversations/tags.js";
import { MEMORY_TAGS } from "../../../catalog/schemas/conversation.js";
import { at, given, log, payload } from "./given.js";

describe("memory_report tagging", () => {
  it("tags a memory sent without a type from its content, and marks the tag as the service's", () => {
    const s = given([
      log("memory_report", at(1, 9), { content: "Worried and anxious about the scan results." }),
      log("memory_report", at(1, 10), { content: "Enjoys gardening.", type: "interests_concerns" }),
      log("memory_report", at(1, 11), { content: "Lives alone since her husband died; her daughter drives her to appointments." }),
    ]);
    expect(payload(s, "conversations").memories.map((m) => [m.type, m.type_source])).toEqual([
      ["mood_stress", "auto"],
      ["interests_concerns", "client"],
      ["social_determinants_of_health", "auto"],
    ]);
  });

  it("keeps the client's tag as sent, even where the rules would choose another", () => {
    const s = given([log("memory_report", at(1), { content: "Nauseous after chemo.", type: "treatment" })]);
    expect(payload(s, "conversations").memories[0]).toMatchObject({ type: "treatment", type_source: "client" });
  });

  it("marks a conversation summary as tagged by the service", () => {
    const s = given([log("conversation", at(1), { conversation_id: "c1", transcript: "Fine today." })]);
    expect(payload(s, "conversations").memories[0]).toMatchObject({ type: "conversation_summary", type_source: "auto" });
  });

  it("chooses the tag with the most keyword hits, clinical tags first on a tie, the fallback when none hits", () => {
    expect(autoTag("Had knee surgery years ago, a history of gout.")).toBe("health_history");
    expect(autoTag("Diagnosed with stage II breast cancer.")).toBe("diagnosis");
    expect(autoTag("Started a new medication, one tablet twice a day.")).toBe("treatment");
    expect(autoTag("Pain in the lower back, and feels tired.")).toBe("symptom_context");
    expect(autoTag("Blood pressure was 150/90 at the pharmacy.")).toBe("lab_and_vitals");
    expect(autoTag("Skips breakfast; low appetite, eats one meal a day.")).toBe("nutrition_related");
    expect(autoTag("Needs help to shower and struggles with the stairs.")).toBe("daily_functions_of_living");
    expect(autoTag("Clinician noted swelling of the left ankle on examination.")).toBe("clinical_observations");
    expect(autoTag("Worried about the chemo.")).toBe("treatment");
    expect(autoTag("Supports the local football team.")).toBe(FALLBACK_TAG);
  });

  it("matches whole words unless a keyword is a stem", () => {
    expect(autoTag("Went to a concert with her grandson.")).toBe("interests_concerns");
    expect(autoTag("Likes painting.")).toBe("interests_concerns");
    expect(autoTag("NAUSEOUS every morning")).toBe("symptom_context");
  });

  it("only ever gives a tag the catalog allows", () => {
    expect(MEMORY_TAGS).toContain(FALLBACK_TAG);
    for (const text of ["", "x", "pain", "lab", "family", "eat", "walk", "noted", "cancer", "insulin", "years ago", "sad"]) {
      expect(MEMORY_TAGS).toContain(autoTag(text));
    }
  });
});
