/** Process exit statuses of the `lisa` command. */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  /** Configuration or permanent authentication error; systemd's RestartPreventExitStatus. */
  config: 78,
} as const;
