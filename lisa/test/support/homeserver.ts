// The real homeservers the acceptance suite runs against (Synapse and
// Dendrite), behind one interface, so each scenario is written once and runs
// against every implementation.
import { type DendriteServer, startDendrite } from "./dendrite/server.ts";
import { type StartSynapseOptions, startSynapse, type SynapseServer } from "./synapse/server.ts";

/** A homeserver implementation the acceptance suite knows how to run. */
export type HomeserverKind = "synapse" | "dendrite";

/** Every implementation, in the order the suite runs them. */
export const HOMESERVER_KINDS: readonly HomeserverKind[] = ["synapse", "dendrite"];

/** A running real homeserver of either kind. */
export type TestHomeserver = SynapseServer | DendriteServer;

/** Options of `startHomeserver`; token lifetimes apply to Synapse only (Dendrite issues no refresh tokens). */
export type StartHomeserverOptions = StartSynapseOptions;

/**
 * Room version of the test rooms per implementation: Synapse 1.163's default
 * (12, room ids without a `:server` part) and Dendrite 0.13.8's (10).
 */
export const ROOM_VERSIONS: Readonly<Record<HomeserverKind, string>> = { synapse: "12", dendrite: "10" };

/** A readable name for test titles. */
export function homeserverLabel(kind: HomeserverKind): string {
  return kind === "synapse" ? "real Synapse" : "real Dendrite";
}

/**
 * The implementations to run scenarios against: every one by default, or the
 * comma-separated list in `LISA_ACCEPTANCE_HOMESERVERS` (e.g. `dendrite`).
 */
export function homeserversUnderTest(): HomeserverKind[] {
  const wanted = process.env["LISA_ACCEPTANCE_HOMESERVERS"];
  if (wanted === undefined || wanted.trim() === "") return [...HOMESERVER_KINDS];
  const kinds = wanted.split(",").map((name) => name.trim());
  const unknown = kinds.filter((name) => !HOMESERVER_KINDS.includes(name as HomeserverKind));
  if (unknown.length > 0) throw new Error(`LISA_ACCEPTANCE_HOMESERVERS names unknown homeservers: ${unknown.join(", ")}`);
  return kinds as HomeserverKind[];
}

/** Installs (if needed) and starts a fresh homeserver of `kind`. */
export function startHomeserver(kind: HomeserverKind, options: StartHomeserverOptions = {}): Promise<TestHomeserver> {
  return kind === "synapse" ? startSynapse(options) : startDendrite(options.startTimeoutMs === undefined ? {} : { startTimeoutMs: options.startTimeoutMs });
}
