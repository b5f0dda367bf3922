// Identity of this controller build and of the protocol it speaks.

/** The protocol version the service and SDK speak (AIC-CLI-002d). */
export const PROTOCOL_VERSION = "lapis-ai-controller/1";

/** The package version. */
export const CONTROLLER_VERSION = "0.1.0";
