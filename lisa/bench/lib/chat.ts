// Deterministic "typical" room chatter for the benchmarks: a mix of short
// replies, one-sentence messages and a few longer ones, as small private
// rooms have them.

import { seededRandom } from "../../test/support/prng.ts";

const SHORT = ["ok", "lol", "true", "same here", "nice!", "thanks :)", "agreed", "hm, not sure", "yes", "on my way"];
const SENTENCES = [
  "Did anyone try the new ramen place near the station?",
  "I think the meeting moved to Thursday at 3, can someone confirm?",
  "The build is green again after the dependency bump.",
  "We should book the cabin before the prices go up in spring.",
  "My train is delayed by twenty minutes, start without me.",
  "That article about sourdough starters was surprisingly good.",
  "Can we keep the budget spreadsheet in the shared folder?",
  "The cat knocked the plant over again, third time this week.",
  "I'll bring the projector, somebody else has to bring cables.",
  "Has anybody seen my blue umbrella? I left it here on Friday.",
];
const LONG = [
  "Long story short: the landlord agreed to fix the heating, but only after the inspection next month. Until then we keep using the space heater, and please don't leave it on overnight.",
  "I compared the three offers. The second one is cheaper per month, but the contract runs for two years and cancelling early costs a lot, so I would still go with the first one.",
  "Here is the plan for Saturday: meet at 9 at the bakery, drive to the lake, lunch around 1, and whoever wants can hike the ridge afterwards. Bring sunscreen, it will be hot.",
];

/** One chat message: who wrote it and what. */
export interface ChatLine {
  readonly sender: string;
  readonly body: string;
}

/** `count` deterministic messages from `senders`: ~35% short, ~50% one sentence, ~15% long. */
export function typicalChat(count: number, senders: readonly string[], seed = 42): ChatLine[] {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  return Array.from({ length: count }, () => {
    const roll = random();
    const body = roll < 0.35 ? pick(SHORT) : roll < 0.85 ? pick(SENTENCES) : pick(LONG);
    return { sender: pick(senders), body };
  });
}
