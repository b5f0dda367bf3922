// Dendrite 0.13.8 configuration for one test homeserver: SQLite files in the
// data folder, 127.0.0.1 only (the listen address is a command-line flag),
// shared-secret registration, no federation, rate limits far above any test.
// Written as JSON, which Dendrite's YAML loader reads; unset keys keep
// Dendrite's own defaults (it applies them before reading the file).
import { join } from "node:path";

/** Everything needed to write one Dendrite configuration. */
export interface DendriteConfigInput {
  dataDir: string;
  serverName: string;
  registrationSharedSecret: string;
  privateKeyPath: string;
}

// Dendrite's limiter counts requests per slot with a cool-off; this is never reached.
const RATE_LIMITING = { enabled: true, threshold: 1_000_000, cooloff_ms: 1, exempt_user_ids: [] } as const;

function sqlite(dataDir: string, component: string): { connection_string: string } {
  return { connection_string: `file:${join(dataDir, `dendrite_${component}.db`)}` };
}

/** The configuration as a plain object. */
export function dendriteConfig(input: DendriteConfigInput): Record<string, unknown> {
  const { dataDir } = input;
  return {
    version: 2,
    global: {
      server_name: input.serverName,
      private_key: input.privateKeyPath,
      key_validity_period: "168h0m0s",
      disable_federation: true,
      presence: { enable_inbound: false, enable_outbound: false },
      trusted_third_party_id_servers: [],
      jetstream: { storage_path: dataDir, in_memory: false, topic_prefix: "Dendrite" },
      metrics: { enabled: false },
      server_notices: { enabled: false },
      report_stats: { enabled: false },
      cache: { max_size_estimated: 128 * 1024 * 1024, max_age: "1h0m0s" },
    },
    client_api: {
      registration_disabled: true,
      registration_shared_secret: input.registrationSharedSecret,
      guests_disabled: true,
      rate_limiting: RATE_LIMITING,
    },
    federation_api: { database: sqlite(dataDir, "federationapi"), key_perspectives: [], send_max_retries: 1 },
    key_server: { database: sqlite(dataDir, "keyserver") },
    media_api: { database: sqlite(dataDir, "mediaapi"), base_path: join(dataDir, "media") },
    room_server: { database: sqlite(dataDir, "roomserver") },
    sync_api: { database: sqlite(dataDir, "syncapi"), search: { enabled: false, index_path: join(dataDir, "searchindex") } },
    // Cheap password hashing (bcrypt's minimum): every test logs in many times.
    user_api: { account_database: sqlite(dataDir, "userapi"), bcrypt_cost: 4 },
    relay_api: { database: sqlite(dataDir, "relayapi") },
    mscs: { mscs: [], database: sqlite(dataDir, "mscs") },
    logging: [{ type: "file", level: "warn", params: { path: join(dataDir, "log") } }],
  };
}
