/**
 * certify settings of the staging runs: short capacity runs at a low rate, so that a run costs
 * well under a minute on the reference server's short windows. Every other setting keeps its
 * default, as a user's run would.
 */
export const STAGING_ENV: Record<string, string> = {
  WORKERS: '2',
  LOAD_DURATION_S: '2',
  LOAD_RATE: '40',
  MAX_RETRY_AFTER_S: '30',
  // A simulator's messages cost nothing: every generated message case is sent, so GEN-01 is certified whole.
  MAX_MESSAGES: '1000',
};
