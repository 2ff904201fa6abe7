/**
 * The reference server behind a fault case, a variant or a staging run: windows of 5 s, a second
 * longer than certify's bundled server (4 s), since the matrix runs three certifications at once
 * beside the rest of `npm test` and a busy runner needs the time to count a key to its limit.
 */
import { startReferenceTarget, type ReferenceTarget, type ReferenceTargetOptions } from '../certify/reference-target.ts';

export const CASE_WINDOW_MS = 5_000;

/** `startReferenceTarget` on `CASE_WINDOW_MS` windows unless `options` name their own. */
export const startCaseReference = (options: ReferenceTargetOptions = {}): Promise<ReferenceTarget> =>
  startReferenceTarget({ minuteWindowMs: CASE_WINDOW_MS, ...options });
