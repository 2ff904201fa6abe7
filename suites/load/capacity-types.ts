import type { Finding } from '../../core/finding.ts';
import type { LoadFigures, TlsOptions } from './engine.ts';
import type { Pacer } from './http.ts';
import type { RunJournal } from '../journal/writer.ts';

/** Ledger ids and parts this check judges (suites/requirements.yaml). */
export const CAPACITY = {
  id: 'LOAD-01',
  gateId: 'LOAD-04',
  answered: 'answered',
  schemas: 'schemas',
  restored: 'restored',
  prerequisite: 'prerequisite',
  thresholds: 'thresholds',
} as const;

export const KEY = '<LOAD_KEY>';

export interface CapacityConfig {
  /** Inventory base address, ending in `/v1`. */
  baseUrl: string;
  /** The run's journal of changes: the mix's pet and its count are journaled before the load changes it. */
  journal?: RunJournal;
  loadKey: string;
  mode: 'list' | 'mix';
  durationS: number;
  /** Arrival rate of the open model (requests per second). */
  ratePerS: number;
  /** Most requests in flight (open model), or the connections of a saturating run. */
  connections: number;
  /** Saturate the target (closed model) instead of the open model: the user's explicit opt-in. */
  saturate?: boolean;
  maxRequests: number;
  timeoutS: number;
  /** The user's gate: p99 latency must stay below it (ms); undefined when not set. */
  p99Ms?: number;
  /** The user's gate: error rate must stay at or below it; undefined when not set. */
  maxErrorRate?: number;
  loopbackOnly: boolean;
  tls?: TlsOptions;
  /** Responses kept for schema validation (default 100). */
  sampleSize?: number;
  /** Longest wait for a Retry-After before restoring the stock (`MAX_RETRY_AFTER_S`). */
  maxRetryAfterS: number;
  /** The run-wide pacer (suites/pacing): every request is sent under its grant. */
  pacer: Pacer;
  progress?: (line: string) => void;
}

export interface CapacityFigures {
  mode: 'list' | 'mix';
  load: LoadFigures | null;
  sampled: number;
  invalidSamples: number;
  /** The thresholds the user set (null: not set, not judged). */
  thresholds: { LOAD_P99_MS: number | null; LOAD_MAX_ERROR_RATE: number | null };
  pet?: { petId: string; original: number; restored: boolean | null };
  requests: { total: number; load: number; setup: number };
  durationS: number;
}

export interface CapacityOutcome {
  findings: Finding[];
  evidence: string[];
  figures: CapacityFigures;
}

export interface PetChoice {
  petId: string;
  original: number;
}

export interface LeasedPet extends PetChoice {
  release(retire: boolean): Promise<void>;
  /** Its journal entry (core/journal.ts), closed once its restore is seen in the list. */
  journaled?: string;
}

/** One capacity run as it goes: its config, findings, evidence and figures. */
export interface Ctx {
  config: CapacityConfig;
  progress: (line: string) => void;
  findings: Finding[];
  evidence: string[];
  figures: CapacityFigures;
  authorization: string;
  listUrl: string;
  listPath: string;
}

/** What one request on LOAD_KEY shows of the key's room, before the capacity runs are planned. */
export interface Headroom {
  /** The answer's status; undefined when none came (the reason in `error`). */
  status?: number;
  /** Its `X-RateLimit-Remaining`, when it carried a valid one. */
  remaining?: number;
  error?: string;
  /** Requests sent: 1, or 0 when the pacer held the key. */
  requests: number;
}
