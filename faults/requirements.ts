/**
 * The ledger ids (`suites/requirements.yaml`) the catalogue and the variants refer to, by meaning.
 * A test (`tests/faults/catalogue.test.ts`) checks every id here exists in the ledger.
 */
export const REQ = {
  auth401: 'AUTH-03',
  authSchemeCase: 'AUTH-05',
  authChallenge: 'AUTH-06',
  errorBody: 'ERR-01',
  errorContentType: 'ERR-02',
  errorStatusMatches: 'ERR-03',
  listSchema: 'INV-01',
  listInt64: 'INV-02',
  updateResponse: 'UPD-01',
  updatePersisted: 'UPD-02',
  update400: 'UPD-03',
  update404: 'UPD-04',
  messageResponse: 'MSG-01',
  messageCreatedAt: 'MSG-02',
  message400: 'MSG-03',
  rlHeadersPresent: 'RL-01',
  rlReset: 'RL-02',
  rlRemainingRange: 'RL-03',
  rlPlanLimit: 'RL-04',
  limitEnforced: 'RL-05',
  retryAfterPresent: 'RL-06',
  retryAfterFormat: 'RL-07',
  retryAfterSuffices: 'RL-08',
  remainingZeroOn429: 'RL-09',
  limitConcurrent: 'RL-10',
} as const;
