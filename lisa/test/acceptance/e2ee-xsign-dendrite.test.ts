// LISA-XSIGN on real Dendrite (one homeserver per process: the crypto store opens once per process).
import { homeserversUnderTest } from "../support/acceptance-world.ts";
import { describeCrossSigningProof } from "../support/e2ee/xsign-scenario.ts";

if (homeserversUnderTest().includes("dendrite")) describeCrossSigningProof("dendrite");
